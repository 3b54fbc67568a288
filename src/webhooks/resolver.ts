// Host name → addresses, behind one small interface: DNS over HTTPS from the Worker in production,
// a fixed answer in tests. (Workers have no socket-level resolver; DoH is the documented way.)
import { config, DEFAULT_DOH_URL } from "../config";

export interface Resolver {
  /** Every A and AAAA address of `hostname`; an empty list when it has none (NXDOMAIN, no records). */
  resolve(hostname: string): Promise<string[]>;
}

/** The lookup itself failed (resolver unreachable or answered with an error other than NXDOMAIN). */
export class ResolveError extends Error {}

const RECORD_TYPES = { A: 1, AAAA: 28 } as const;

interface DohAnswer {
  Status: number;
  Answer?: { name: string; type: number; data: string }[];
}

/** DNS over HTTPS with the JSON API (`application/dns-json`), which Cloudflare and Google both serve. */
export class DohResolver implements Resolver {
  constructor(
    private readonly endpoint = DEFAULT_DOH_URL,
    private readonly timeoutMs = 5_000,
  ) {}

  async resolve(hostname: string): Promise<string[]> {
    const [a, aaaa] = await Promise.all([this.query(hostname, "A"), this.query(hostname, "AAAA")]);
    return [...a, ...aaaa];
  }

  private async query(hostname: string, type: keyof typeof RECORD_TYPES): Promise<string[]> {
    const url = `${this.endpoint}?name=${encodeURIComponent(hostname)}&type=${type}`;
    let body: DohAnswer;
    try {
      const res = await fetch(url, { headers: { Accept: "application/dns-json" }, signal: AbortSignal.timeout(this.timeoutMs) });
      if (!res.ok) throw new ResolveError(`DNS resolver answered HTTP ${res.status}`);
      body = (await res.json()) as DohAnswer;
    } catch (err) {
      if (err instanceof ResolveError) throw err;
      throw new ResolveError(`DNS lookup of ${hostname} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (body.Status === 3) return []; // NXDOMAIN
    if (body.Status !== 0) throw new ResolveError(`DNS lookup of ${hostname} failed with rcode ${body.Status}`);
    // CNAME chains come with the final records in the same answer; keep only the addresses.
    return (body.Answer ?? []).filter((r) => r.type === RECORD_TYPES[type]).map((r) => r.data);
  }
}

/** The resolver the Worker uses: DoH at `DOH_URL` (an optional var) or Cloudflare's endpoint. */
export function getResolver(env: object): Resolver {
  return new DohResolver(config(env).dohUrl);
}
