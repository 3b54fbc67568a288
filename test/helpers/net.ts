// Stand-ins for the outside world inside workerd: DNS over HTTPS answers from a table, and webhook
// receivers as functions. Only outbound fetches to the DoH endpoint and to registered receiver origins
// are intercepted; anything else (the GA worker) goes out for real.
import { vi } from "vitest";
import { DEFAULT_DOH_URL } from "../../src/config";

export interface Received {
  url: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

export type Receiver = (req: Received, signal: AbortSignal | undefined) => Response | Promise<Response>;

export interface FakeNet {
  /** host → addresses; change it at any time (a host that resolves differently later). */
  dns: Record<string, string[]>;
  /** origin (e.g. "https://hooks.example.com") → receiver. */
  receivers: Record<string, Receiver>;
  received: Received[];
  dnsQueries: string[];
  restore(): void;
}

export function fakeNet(init: { dns?: Record<string, string[]>; receivers?: Record<string, Receiver> } = {}): FakeNet {
  const original = globalThis.fetch;
  const net: FakeNet = {
    dns: { ...init.dns },
    receivers: { ...init.receivers },
    received: [],
    dnsQueries: [],
    restore: () => spy.mockRestore(),
  };
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (`${url.origin}${url.pathname}` === DEFAULT_DOH_URL) {
      const name = (url.searchParams.get("name") ?? "").toLowerCase();
      const type = url.searchParams.get("type") === "AAAA" ? 28 : 1;
      net.dnsQueries.push(`${name} ${type === 1 ? "A" : "AAAA"}`);
      const addresses = net.dns[name];
      if (!addresses) return Response.json({ Status: 3 });
      const answer = addresses.filter((a) => (type === 28) === a.includes(":")).map((data) => ({ name, type, TTL: 60, data }));
      return Response.json({ Status: 0, Answer: answer });
    }
    const receiver = net.receivers[url.origin];
    if (receiver) {
      const req = new Request(input, init);
      const received: Received = { url: req.url, headers: Object.fromEntries(req.headers), body: await req.text(), at: Date.now() };
      net.received.push(received);
      if (init?.redirect !== "manual") throw new Error("deliveries must not follow redirects");
      return receiver(received, init?.signal ?? undefined);
    }
    return original(input as RequestInfo, init);
  });
  return net;
}

/** A receiver that never answers until the request is aborted. */
export const hangingReceiver: Receiver = (_req, signal) =>
  new Promise<Response>((_resolve, reject) => {
    signal?.addEventListener("abort", () => reject(new Error("aborted")));
  });

/** Verifies a delivery the way a receiver would, with our own HMAC (independent of src/). */
export async function expectedSignature(secret: string, timestamp: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, enc.encode(`${timestamp}.${body}`));
  return `sha256=${[...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
