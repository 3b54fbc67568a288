// Webhook URL safety (docs/webhooks.md): https only, and every address the host resolves to must be
// public. IP literals in any notation (decimal, octal, hex, short forms, IPv6 with embedded IPv4) are
// checked the same way. Ranges come from ipaddr.js; anything it calls "unicast" is public unless it
// falls in one of the extra ranges below. Run at create, at PATCH and before every delivery attempt; what
// is stored and called is the URL as this check parsed it (`url.href`, WHATWG serialisation).
import ipaddr from "ipaddr.js";
import { config } from "../config";
import { controlCharacter } from "../model/fields";
import { ResolveError, type Resolver } from "./resolver";

export type UnsafeReason =
  | "control_character"
  | "invalid_url"
  | "scheme_not_allowed"
  | "credentials_not_allowed"
  | "host_not_allowed"
  | "does_not_resolve"
  | "dns_lookup_failed"
  | "non_public_address";

export type UrlCheck =
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; reason: UnsafeReason; message: string; address?: string; range?: string };

export interface UrlPolicy {
  /** WEBHOOK_ALLOW_PRIVATE=true: `http` and loopback targets are allowed (local development, e2e tests). */
  allowPrivate: boolean;
}

export const policyOf = (env: object): UrlPolicy => ({ allowPrivate: config(env).webhookAllowPrivate });

const cidr = (s: string) => ipaddr.parseCIDR(s);

/** Non-public ranges ipaddr.js classifies as "unicast" (or that must be named explicitly). */
const EXTRA_IPV4 = [
  ["unspecified", cidr("0.0.0.0/8")],
  ["ietfProtocol", cidr("192.0.0.0/24")], // includes 192.0.0.192 (Oracle Cloud metadata)
  ["documentation", cidr("192.0.2.0/24")],
  ["documentation", cidr("198.51.100.0/24")],
  ["documentation", cidr("203.0.113.0/24")],
  ["benchmarking", cidr("198.18.0.0/15")],
  ["carrierGradeNat", cidr("100.64.0.0/10")], // includes 100.100.100.200 (Alibaba Cloud metadata)
  ["reserved", cidr("240.0.0.0/4")],
] as const;

const EXTRA_IPV6 = [
  // IPv4-compatible (deprecated) addresses ::a.b.c.d embed an IPv4 address.
  ["ipv4Compatible", cidr("::/96")],
  ["documentation", cidr("2001:db8::/32")],
  ["documentation", cidr("3fff::/20")],
  ["benchmarking", cidr("2001:2::/48")],
  ["uniqueLocal", cidr("fc00::/7")], // includes fd00:ec2::254 (AWS metadata over IPv6)
  ["nat64Local", cidr("64:ff9b:1::/48")],
] as const;

/** Host names that are never public, whatever DNS says. */
const BLOCKED_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa|intranet|lan)$|^metadata(\.|$)/i;

/** The range of an address when it is not public, or null when it is. Throws on a non-address. */
export function nonPublicRange(address: string): string | null {
  const ip = ipaddr.parse(address);
  if (ip.kind() === "ipv4") {
    const v4 = ip as ipaddr.IPv4;
    const range = v4.range();
    if (range !== "unicast") return range;
    for (const [name, [net, bits]] of EXTRA_IPV4) if (v4.match(net as ipaddr.IPv4, bits)) return name;
    return null;
  }
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  if (range !== "unicast") return range;
  for (const [name, [net, bits]] of EXTRA_IPV6) if (v6.match(net as ipaddr.IPv6, bits)) return name;
  return null;
}

const isLoopback = (address: string) => {
  const ip = ipaddr.parse(address);
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) return (ip as ipaddr.IPv6).toIPv4Address().range() === "loopback";
  return ip.range() === "loopback";
};

/** An IP literal as written in a URL host (WHATWG already normalised IPv4 short/hex/octal forms), or null. */
function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  if (ipaddr.IPv6.isValid(bare) && bare.includes(":")) return ipaddr.IPv6.parse(bare).toString();
  // ipaddr.js also accepts the legacy notations (0x7f.1, 017700000001, 2130706433) that URL parsing normalises.
  if (ipaddr.IPv4.isValid(bare)) return ipaddr.IPv4.parse(bare).toString();
  return null;
}

const reject = (reason: UnsafeReason, message: string, extra: { address?: string; range?: string } = {}): UrlCheck => ({
  ok: false,
  reason,
  message,
  ...extra,
});

/** Checks a webhook URL: syntax, scheme, host, then every resolved address. */
export async function checkWebhookUrl(raw: string, resolver: Resolver, policy: UrlPolicy): Promise<UrlCheck> {
  // URL parsing drops TAB, CR and LF anywhere and other C0 controls at either end, so a URL holding one is
  // not the URL that would be called: refused as written (docs/webhooks.md#url-rules).
  const control = controlCharacter(raw);
  if (control) {
    return reject(
      "control_character",
      `url: must not contain control characters (${control.char} at position ${control.index}); send the URL without them.`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return reject("invalid_url", "The URL is not a valid absolute URL.");
  }
  const allowedSchemes = policy.allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!allowedSchemes.includes(url.protocol)) return reject("scheme_not_allowed", "The URL must use https.");
  if (url.username || url.password) return reject("credentials_not_allowed", "The URL must not contain a user name or password.");
  const hostname = url.hostname.toLowerCase();
  if (!hostname) return reject("invalid_url", "The URL has no host.");

  const literal = ipLiteral(hostname);
  const name = hostname.replace(/\.$/, ""); // "vm." is the single-label "vm", fully qualified
  let addresses: string[];
  if (literal) {
    addresses = [literal];
  } else if (policy.allowPrivate && (hostname === "localhost" || hostname.endsWith(".localhost"))) {
    addresses = ["127.0.0.1"];
  } else if (BLOCKED_NAME.test(name) || !name.includes(".")) {
    return reject("host_not_allowed", `The host ${hostname} is not a public host name.`);
  } else {
    try {
      addresses = await resolver.resolve(name);
    } catch (err) {
      const detail = err instanceof ResolveError ? err.message : "DNS lookup failed";
      return reject("dns_lookup_failed", `The host ${hostname} could not be looked up: ${detail}.`);
    }
    if (addresses.length === 0) return reject("does_not_resolve", `The host ${hostname} does not resolve to any address.`);
  }

  for (const address of addresses) {
    let range: string | null;
    try {
      range = nonPublicRange(address);
    } catch {
      return reject("dns_lookup_failed", `The host ${hostname} resolved to something that is not an IP address.`);
    }
    if (range === null) continue;
    if (policy.allowPrivate && isLoopback(address)) continue;
    return reject("non_public_address", `The host ${hostname} resolves to ${address}, which is not a public address (${range}).`, {
      address,
      range,
    });
  }
  return { ok: true, url, addresses };
}
