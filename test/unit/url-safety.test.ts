// Webhook URL safety (src/webhooks/url-safety.ts, docs/webhooks.md) under plain Node: how an address is
// classified, and what checkWebhookUrl decides before any DNS lookup (IP literals in every notation,
// names that are never public, scheme and credentials). Name lookups go to a resolver passed in: here one
// that answers from a table, or fails the test when a URL must be decided without DNS.
import { describe, expect, it } from "vitest";
import { ResolveError, type Resolver } from "../../src/webhooks/resolver";
import { checkWebhookUrl, nonPublicRange } from "../../src/webhooks/url-safety";
import { LITERALS, RESOLVED } from "../helpers/address-classes";

const STRICT = { allowPrivate: false };
const LOCAL = { allowPrivate: true };

/** A resolver the check must not use: the URL is to be decided from itself alone. */
const noDns: Resolver = {
  resolve: async (name: string) => {
    throw new Error(`unexpected DNS lookup of ${name}`);
  },
};

/** A resolver answering from a table (a name it does not know has no address). */
const dns = (table: Record<string, string[]>): Resolver => ({ resolve: async (name: string) => table[name] ?? [] });

describe("nonPublicRange", () => {
  it.each(RESOLVED)("%s (%s → %s) is not public", (_label, _host, address) => {
    expect(nonPublicRange(address)).not.toBeNull();
  });

  it.each([["3fff::1"], ["64:ff9b:1::1"], ["192.0.0.1"], ["192.0.2.255"], ["198.19.255.255"], ["100.127.255.255"], ["255.255.255.254"]])(
    "%s (the edges and other members of those ranges) is not public",
    (address) => {
      expect(nonPublicRange(address)).not.toBeNull();
    },
  );

  it.each([
    ["8.8.8.8"],
    ["1.1.1.1"],
    ["93.184.215.14"],
    ["2606:4700:4700::1111"],
    ["2001:4860:4860::8888"],
    // Just outside the ranges ipaddr.js does not name itself (EXTRA_IPV4 / EXTRA_IPV6).
    ["100.63.255.255"], // below CGNAT 100.64/10
    ["100.128.0.0"], // above it
    ["198.17.255.255"], // below benchmarking 198.18/15
    ["198.20.0.0"], // above it
    ["192.0.1.1"], // after 192.0.0/24
  ])("%s is public", (address) => {
    expect(nonPublicRange(address)).toBeNull();
  });

  it.each([
    ["0.1.2.3", "unspecified"],
    ["100.100.100.200", "carrierGradeNat"],
    ["240.0.0.1", "reserved"],
    ["2001:2::1", "benchmarking"],
    ["fd00:ec2::254", "uniqueLocal"],
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["169.254.169.254", "linkLocal"],
    ["::1", "loopback"],
    ["::ffff:8.8.8.8", "ipv4Mapped"],
    ["::", "unspecified"],
  ])("%s is in the range %s (the name a refusal gives)", (address, range) => {
    expect(nonPublicRange(address)).toBe(range);
  });

  it("throws on something that is not an address", () => {
    expect(() => nonPublicRange("example.com")).toThrow();
    expect(() => nonPublicRange("256.1.1.1")).toThrow();
  });
});

describe("checkWebhookUrl without DNS", () => {
  it.each(LITERALS)("refuses %s (%s) without a lookup", async (_label, url) => {
    const check = await checkWebhookUrl(url, noDns, STRICT);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(["non_public_address", "host_not_allowed"]).toContain(check.reason);
  });

  it("names the address and its range of a refused IP literal, whatever its notation", async () => {
    for (const url of ["https://127.0.0.1/", "https://2130706433/", "https://0177.0.0.1/", "https://0x7f000001/", "https://127.1/"]) {
      expect(await checkWebhookUrl(url, noDns, STRICT), url).toMatchObject({
        ok: false,
        reason: "non_public_address",
        address: "127.0.0.1",
        range: "loopback",
      });
    }
    expect(await checkWebhookUrl("https://[::ffff:7f00:1]/", noDns, STRICT)).toMatchObject({
      ok: false,
      reason: "non_public_address",
      range: "ipv4Mapped",
    });
  });

  it.each([
    ["https://localhost/hook"],
    ["https://app.localhost/hook"],
    ["https://printer.local/"],
    ["https://metadata.google.internal/computeMetadata/v1/"],
    ["https://router.home.arpa/"],
    ["https://intranet/hook"],
    ["https://vm./hook"],
  ])("refuses the host of %s as never public, without a lookup", async (url) => {
    expect(await checkWebhookUrl(url, noDns, STRICT)).toMatchObject({ ok: false, reason: "host_not_allowed" });
  });

  it("accepts a public IP literal as its only address, without a lookup", async () => {
    const check = await checkWebhookUrl("https://8.8.8.8:8443/hook?x=1", noDns, STRICT);
    expect(check).toMatchObject({ ok: true, addresses: ["8.8.8.8"] });
    if (check.ok) expect(check.url.href).toBe("https://8.8.8.8:8443/hook?x=1");
  });

  it("refuses what is not an https URL without credentials", async () => {
    expect(await checkWebhookUrl("not a url", noDns, STRICT)).toMatchObject({ ok: false, reason: "invalid_url" });
    expect(await checkWebhookUrl("/relative/hook", noDns, STRICT)).toMatchObject({ ok: false, reason: "invalid_url" });
    expect(await checkWebhookUrl("http://8.8.8.8/hook", noDns, STRICT)).toMatchObject({ ok: false, reason: "scheme_not_allowed" });
    expect(await checkWebhookUrl("ftp://8.8.8.8/hook", noDns, STRICT)).toMatchObject({ ok: false, reason: "scheme_not_allowed" });
    expect(await checkWebhookUrl("https://user:pw@8.8.8.8/hook", noDns, STRICT)).toMatchObject({
      ok: false,
      reason: "credentials_not_allowed",
    });
  });

  it("with WEBHOOK_ALLOW_PRIVATE, allows http and loopback targets only", async () => {
    expect(await checkWebhookUrl("http://127.0.0.1:9000/hook", noDns, LOCAL)).toMatchObject({ ok: true, addresses: ["127.0.0.1"] });
    expect(await checkWebhookUrl("http://localhost:9000/hook", noDns, LOCAL)).toMatchObject({ ok: true, addresses: ["127.0.0.1"] });
    expect(await checkWebhookUrl("http://[::1]/hook", noDns, LOCAL)).toMatchObject({ ok: true });
    expect(await checkWebhookUrl("http://10.0.0.1/hook", noDns, LOCAL)).toMatchObject({ ok: false, range: "private" });
    expect(await checkWebhookUrl("http://169.254.169.254/", noDns, LOCAL)).toMatchObject({ ok: false, range: "linkLocal" });
    expect(await checkWebhookUrl("ftp://127.0.0.1/", noDns, LOCAL)).toMatchObject({ ok: false, reason: "scheme_not_allowed" });
  });
});

describe("checkWebhookUrl on what a name resolves to", () => {
  it("accepts a name whose every address is public", async () => {
    const check = await checkWebhookUrl("https://hooks.example.com/in", dns({ "hooks.example.com": ["8.8.8.8", "2001:4860::1"] }), STRICT);
    expect(check).toMatchObject({ ok: true, addresses: ["8.8.8.8", "2001:4860::1"] });
  });

  it("refuses a name when any one of its addresses is not public, naming it", async () => {
    const check = await checkWebhookUrl("https://mixed.example.com/", dns({ "mixed.example.com": ["8.8.8.8", "10.0.0.7"] }), STRICT);
    expect(check).toMatchObject({ ok: false, reason: "non_public_address", address: "10.0.0.7", range: "private" });
  });

  it("looks up a fully qualified name without its final dot", async () => {
    const check = await checkWebhookUrl("https://hooks.example.com./in", dns({ "hooks.example.com": ["1.1.1.1"] }), STRICT);
    expect(check).toMatchObject({ ok: true, addresses: ["1.1.1.1"] });
  });

  it("refuses a name with no address, a failed lookup, and an answer that is not an address", async () => {
    expect(await checkWebhookUrl("https://nothing.example.com/", dns({}), STRICT)).toMatchObject({ ok: false, reason: "does_not_resolve" });
    const failing: Resolver = {
      resolve: async () => {
        throw new ResolveError("SERVFAIL");
      },
    };
    expect(await checkWebhookUrl("https://broken.example.com/", failing, STRICT)).toMatchObject({
      ok: false,
      reason: "dns_lookup_failed",
    });
    expect(await checkWebhookUrl("https://odd.example.com/", dns({ "odd.example.com": ["not-an-ip"] }), STRICT)).toMatchObject({
      ok: false,
      reason: "dns_lookup_failed",
    });
  });
});
