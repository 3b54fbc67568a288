// The one client of the Dispatcher (object.ts): the platform's run places and the fair line of
// runs waiting for one, one instance for the whole platform.
import { config } from "../../config";
import type { Bindings } from "../../env";
import type { Offer } from "./object";

const dispatcher = (env: Bindings) => env.DISPATCHER.getByName("runs");

/** Asks a place for a queued run; true when it may start now (else a grant message comes later). */
export async function offerPlace(env: Bindings, offer: Offer): Promise<boolean> {
  return (await dispatcher(env).offer(offer, config(env).runCapacity)).startNow;
}

/** The run left its place or the line (it ended, or will never start): the next in turn get places. */
export async function releasePlace(env: Bindings, runId: string): Promise<void> {
  await dispatcher(env).release(runId, config(env).runCapacity);
}

/** The worker refused the granted run for want of room: back to the head of the line. */
export async function givePlaceBack(env: Bindings, offer: Offer): Promise<void> {
  await dispatcher(env).giveBack(offer);
}

export const dispatchState = (env: Bindings) => dispatcher(env).state(config(env).runCapacity);
