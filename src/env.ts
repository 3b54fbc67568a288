// The Worker's environment: what `npx wrangler types` generates from wrangler.toml (worker-configuration.d.ts,
// committed; `npm run types:env` regenerates it, scripts/check-env-types.mjs fails when it has drifted),
// plus what it cannot know: the vars and secrets wrangler.toml does not set (their names are the config
// schema's, config.ts; unset is allowed) and the messages of the two queues. Vars and secrets are strings
// here; config.ts parses them.
import type { ConfigVar } from "./config";

/**
 * A run message names a run; D1 is the source of truth. Without `granted` it asks the Dispatcher for a
 * place (a new or re-queued run); with it, the Dispatcher has given the run a place and it may start.
 */
export interface RunMessage {
  run_id: string;
  granted?: boolean;
  /** The run's account and places (parallel workers), so the consumer asks the Dispatcher without a
   * D1 read first; a message without them (sent by an older build) has them read from the run. */
  account_id?: string;
  places?: number;
  /**
   * Sent by a GaRunner instance whose container stopped while the run's segment (claim `attempt`) was
   * live: the run is resumed as the silent-run sweep resumes it, if it still is running that attempt
   * (src/runner/segment.ts, src/domain/lost-runs.ts).
   */
  lost?: { attempt: number };
}

/** A delivery message names the delivery to attempt. */
export interface DeliveryMessage {
  delivery_id: string;
}

/** The vars and secrets of the config schema that wrangler.toml does not set: secrets, and vars only some deployments set. */
type UnsetVars = { [K in Exclude<ConfigVar, keyof Env>]?: string };

/** The bindings, vars and secrets of the Worker. */
export interface Bindings extends Env, UnsetVars {}

/** The runs queue, typed by its messages (wrangler types types a queue's body as unknown). */
export const runsQueue = (env: Bindings): Queue<RunMessage> => env.RUNS_QUEUE;
/** The deliveries queue, typed by its messages. */
export const deliveriesQueue = (env: Bindings): Queue<DeliveryMessage> => env.DELIVERIES_QUEUE;
