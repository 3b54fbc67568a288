// /api/v1/code-uploads and `<field>_id` at creation (docs/api.md#code-uploads).
import { beforeAll, describe, expect, it } from "vitest";
import { admin, call, env, expectError, getSubmission, job, json, newAccount, type TestAccount } from "../helpers/api";

const SOURCE = "def fit(ga, solution, idx):\n    return -float((solution ** 2).sum())\n";
let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  [a, b] = [await newAccount(), await newAccount()];
});

const upload = async (key: string, content: string) => call("/api/v1/code-uploads", { key, body: { content } });

describe("code uploads", () => {
  it("uploads, gets (with content) and lists (without) an account's code", async () => {
    const res = await upload(a.key, SOURCE);
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(created).toMatchObject({ content_size: SOURCE.length, is_expired: false });
    expect(created.content_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(24 * 60 * 60 * 1000);
    const got = await json(await call(`/api/v1/code-uploads/${created.code_id}`, { key: a.key }));
    expect(got).toMatchObject({ code_id: created.code_id, content: SOURCE });
    const listed = await json(await call("/api/v1/code-uploads?limit=10", { key: a.key }));
    expect(listed.results.map((r: { code_id: string }) => r.code_id)).toContain(created.code_id);
    expect(listed.results[0]).not.toHaveProperty("content");
  });

  it("never shows another account's upload (404), and refuses a bad body", async () => {
    const created = await json(await upload(a.key, SOURCE));
    await expectError(await call(`/api/v1/code-uploads/${created.code_id}`, { key: b.key }), 404, "not_found");
    await expectError(await call("/api/v1/code-uploads", { key: a.key, body: { content: "" } }), 400, "validation_failed");
    await expectError(await call("/api/v1/code-uploads", { key: a.key, body: { content: SOURCE, role: "x" } }), 400, "validation_failed");
    await expectError(await upload(a.key, "x".repeat(64 * 1024 + 1)), 413, "payload_too_large");
  });

  it("a submission references an upload as fitness_func_id and stores its source", async () => {
    const { code_id } = await json(await upload(a.key, SOURCE));
    const body = job({ fitness_func_entry: "fit" }) as Record<string, unknown>;
    delete body.fitness_func;
    const res = await call("/api/v1/submissions", { key: a.key, body: { ...body, fitness_func_id: code_id } });
    expect(res.status).toBe(202);
    const row = await getSubmission(a.key, (await json(res)).id);
    expect(row.parameters.fitness_func).toBe(SOURCE);
    expect(row.parameters).not.toHaveProperty("fitness_func_id");
  });

  it("refuses both forms, a foreign or unknown upload, and an expired one, creating nothing", async () => {
    const { code_id } = await json(await upload(a.key, SOURCE));
    const both = await expectError(
      await call("/api/v1/submissions", { key: a.key, body: job({ fitness_func_id: code_id }) }),
      400,
      "validation_failed",
    );
    expect(both.details.fields[0].field).toBe("fitness_func_id");
    const withoutSource = (overrides: Record<string, unknown>) => {
      const body = job({ fitness_func_entry: "fit", ...overrides }) as Record<string, unknown>;
      delete body.fitness_func;
      return body;
    };
    const foreign = await expectError(
      await call("/api/v1/submissions", { key: b.key, body: withoutSource({ fitness_func_id: code_id }) }),
      422,
      "code_upload_not_found",
    );
    expect(foreign.details.field).toBe("fitness_func_id");
    await env.DB.prepare("UPDATE code_uploads SET expires_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), code_id)
      .run();
    const expired = await expectError(
      await call("/api/v1/submissions", { key: a.key, body: withoutSource({ fitness_func_id: code_id }) }),
      422,
      "code_upload_expired",
    );
    expect(expired.details.field).toBe("fitness_func_id");
    expect((await json(await call(`/api/v1/code-uploads/${code_id}`, { key: a.key }))).is_expired).toBe(true);
  });

  it("needs the submissions scopes", async () => {
    const readOnly = await admin(`/accounts/${a.id}/keys`, { body: { name: "read only", scopes: ["results:read"] } });
    const key = (await json(readOnly)).key;
    await expectError(await upload(key, SOURCE), 403, "scope_required");
    await expectError(await call("/api/v1/code-uploads", { key }), 403, "scope_required");
  });
});
