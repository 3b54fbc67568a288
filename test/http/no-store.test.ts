// `Cache-Control: no-store` on every answer of the API and the admin API (docs/api.md#caching): what a
// key reads — a result, a file download, a new key, an error — is never kept by a browser or a cache.
import { describe, expect, it } from "vitest";
import { admin, call, newAccount, newKey, newResult } from "../helpers/api";

const noStore = (res: Response, what: string) => expect(res.headers.get("Cache-Control"), `${what}: ${res.status}`).toBe("no-store");

describe("Cache-Control: no-store", () => {
  it("on every answer to a request with a key: reads, writes, file downloads and every error", async () => {
    const account = await newAccount();
    const { submissionId, resultId } = await newResult(account.key);
    const reader = await newKey(account, ["results:read"]);
    const answers: [string, Response][] = [
      ["account", await call("/api/v1/account", { key: account.key })],
      ["list", await call("/api/v1/submissions/", { key: account.key })],
      ["submission", await call(`/api/v1/submissions/${submissionId}`, { key: account.key })],
      ["result", await call(`/api/v1/results/${resultId}`, { key: account.key })],
      ["csv download", await call(`/api/v1/results/${resultId}/files/fitness_history.csv`, { key: account.key })],
      ["svg download", await call(`/api/v1/results/${resultId}/files/fitness.svg`, { key: account.key })],
      ["json download", await call(`/api/v1/results/${resultId}/files/result.json`, { key: account.key })],
      ["write", await call("/api/v1/webhooks", { key: account.key, body: { url: "https://93.184.215.14/in", events: ["webhook.test"] } })],
      ["400", await call("/api/v1/submissions/", { key: account.key, body: { num_generations: "x" } })],
      ["401 bad key", await call("/api/v1/account", { key: `alk_AAAAAAAA_${"A".repeat(40)}` })],
      ["401 no key", await call("/api/v1/account")],
      ["403", await call("/api/v1/submissions/", { key: reader })],
      ["404", await call("/api/v1/results/AAAAAAAAAAAA", { key: account.key })],
      ["404 path", await call("/api/v1/nothing-here", { key: account.key })],
      ["405", await call("/api/v1/account", { key: account.key, method: "DELETE" })],
      ["415", await call("/api/v1/webhooks", { key: account.key, rawBody: "x", headers: { "Content-Type": "text/plain" } })],
      ["health", await call("/api/v1/health", { key: account.key })],
      ["openapi", await call("/api/v1/openapi.json", { key: account.key })],
      ["device code", await call("/api/v1/auth/device/code", { body: {} })],
    ];
    for (const [what, res] of answers) noStore(res, what);
    expect(answers.find(([what]) => what === "csv download")![1].status).toBe(200);
  });

  it("on the admin API's answers (a new key is in one)", async () => {
    const account = await newAccount();
    noStore(await admin(`/accounts/${account.id}/keys`, { body: { name: "k", scopes: ["results:read"] } }), "new key");
    noStore(await admin(`/accounts/${account.id}`), "account");
    noStore(await admin("/accounts/AAAAAAAAAAAA"), "404");
    noStore(await call("/admin/v1/accounts/AAAAAAAAAAAA"), "401");
  });

  it("is declared on every response of both OpenAPI documents", async () => {
    for (const path of ["/api/v1/openapi.json", "/admin/v1/openapi.json"]) {
      const doc = await (await (path.startsWith("/admin") ? admin("/openapi.json") : call(path))).json<any>();
      expect(doc.components.headers["Cache-Control"]).toMatchObject({ required: true, schema: { enum: ["no-store"] } });
      for (const [route, item] of Object.entries<any>(doc.paths))
        for (const [method, op] of Object.entries<any>(item))
          for (const [status, response] of Object.entries<any>(op.responses))
            expect(response.headers?.["Cache-Control"], `${method} ${route} ${status}`).toEqual({
              $ref: "#/components/headers/Cache-Control",
            });
    }
  });
});
