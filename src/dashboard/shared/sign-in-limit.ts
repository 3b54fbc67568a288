// Failed sign-ins are limited per IP (docs/dashboard.md#sign-in): a wrong key, an unknown, used or
// expired link, a device code that matches no pending request. Counted in the IP's Durable Object.
import type { Context } from "hono";
import { ipWindow } from "../../do/ip-rate-limit/client";
import { clientIp } from "../../surface/caller";
import type { DashboardEnv } from "./context";

/** Seconds until this request's IP may try to sign in again, or 0 when it may now. */
export const signInWait = (c: Context<DashboardEnv>): Promise<number> => ipWindow(c.env, clientIp(c)).signInWait();

/** Counts a failed sign-in against this request's IP. */
export const signInFailed = (c: Context<DashboardEnv>) => ipWindow(c.env, clientIp(c)).signInFailed();

/** What a person is told while their IP may not sign in. */
export const tooMany = (wait: number) =>
  `Too many failed sign-ins from your address; try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""}.`;
