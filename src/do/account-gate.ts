// Per-account admission state that must be exact under concurrency (rate windows, slots, quota,
// idempotency). Declared now so the deployment's Durable Object migrations are stable.
import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../env";

export class AccountGate extends DurableObject<Bindings> {}
