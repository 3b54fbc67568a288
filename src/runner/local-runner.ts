// Runner for a GA worker process reached by URL (RUNNER_URL): `npm start` and the tests.
import { readIsolation } from "./isolation";
import {
  type RunMetrics,
  type Runner,
  type RunnerHealth,
  RunnerUnavailable,
  type RunToStop,
  readCancel,
  readStart,
  type StartRequest,
} from "./protocol";

export class LocalRunner implements Runner {
  constructor(private readonly baseUrl: string) {}

  private async call(path: string, body: unknown): Promise<Response> {
    try {
      return await fetch(new URL(path, this.baseUrl), {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new RunnerUnavailable(`GA worker at ${this.baseUrl} unreachable: ${String(err)}`);
    }
  }

  /** `attempt` is not needed here: a standing worker has no stop signal (the silent-run sweep finds its losses). */
  async start(request: StartRequest, _attempt: number): Promise<"started" | "already"> {
    return readStart(await this.call("/runs", request));
  }

  async cancel(run: RunToStop): Promise<RunMetrics | null> {
    return readCancel(await this.call(`/runs/${run.id}/cancel`, {}));
  }

  async health(): Promise<RunnerHealth> {
    try {
      const res = await fetch(new URL("/health", this.baseUrl), { signal: AbortSignal.timeout(2_000) });
      if (!res.ok) return { status: "down", reason: `GA worker answered ${res.status}` };
      const isolation = readIsolation(((await res.json().catch(() => null)) as { isolation?: unknown } | null)?.isolation);
      return isolation ? { status: "ok", isolation } : { status: "ok" };
    } catch (err) {
      return { status: "down", reason: `GA worker unreachable (${err instanceof Error ? err.name : "error"})` };
    }
  }
}
