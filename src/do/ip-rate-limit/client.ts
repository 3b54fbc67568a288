// The one client of the IP Durable Object (object.ts): the per-minute window of a caller without a
// valid key, and the failed sign-ins of an IP.
import type { Bindings } from "../../env";

/** The windows of one IP. */
export const ipWindow = (env: Bindings, ip: string) => env.IP_RATE_LIMIT.getByName(ip);
