// What the published Vilvik SDK sends, on the wire (docs/clients.md): `limit` as an alias of
// `page_size` on every list, `submission_type`, `description`, and the per-submission fields Allele
// does not do, refused by name.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createSubmission, expectError, getSubmission, job, json, newAccount, type TestAccount } from "../helpers/api";

let a: TestAccount;
beforeAll(async () => {
  a = await newAccount();
  for (let i = 0; i < 3; i++) await createSubmission(a.key);
});

describe("limit, the alias of page_size", () => {
  for (const list of ["/api/v1/submissions", "/api/v1/results", "/api/v1/webhooks"]) {
    it(`pages ${list} as page_size does`, async () => {
      const viaLimit = await json(await call(`${list}?limit=2`, { key: a.key }));
      const viaPageSize = await json(await call(`${list}?page_size=2`, { key: a.key }));
      expect(viaLimit.results.length).toBe(viaPageSize.results.length);
      expect(viaLimit.results.map((r: { id: string }) => r.id)).toEqual(viaPageSize.results.map((r: { id: string }) => r.id));
      expect((await call(`${list}?limit=2&page_size=2`, { key: a.key })).status).toBe(200);
    });

    it(`refuses ${list} with limit and page_size both given and different, and a limit out of bounds`, async () => {
      const err = await expectError(await call(`${list}?limit=2&page_size=3`, { key: a.key }), 400, "validation_failed");
      expect(err.details.fields[0].field).toBe("limit");
      await expectError(await call(`${list}?limit=0`, { key: a.key }), 400, "validation_failed");
      await expectError(await call(`${list}?limit=x`, { key: a.key }), 400, "validation_failed");
    });
  }

  it("limits submissions to limit rows and links the next page", async () => {
    const page = await json(await call("/api/v1/submissions?limit=2", { key: a.key }));
    expect(page.results).toHaveLength(2);
    expect(page.next).toContain("limit=2");
  });
});

describe("submission_type, description and the fields Allele does not do", () => {
  it("accepts submission_type new and stores a description, returned on the submission row", async () => {
    const created = await call("/api/v1/submissions", { key: a.key, body: job({ submission_type: "new", description: "a first try ✓" }) });
    expect(created.status).toBe(202);
    // The 202 carries what the SDK's Submission reads: name, description, type, creation time, request id.
    const accepted = await json(created.clone());
    expect(accepted).toMatchObject({
      status: "queued",
      name: "sphere",
      description: "a first try ✓",
      submission_type: "new",
      request_id: created.headers.get("X-Request-Id"),
    });
    const row = await getSubmission(a.key, accepted.id);
    expect(row).toMatchObject({ submission_type: "new", description: "a first try ✓", created_at: accepted.created_at });
    expect(row.parameters).not.toHaveProperty("description");
    expect(row.parameters).not.toHaveProperty("submission_type");
    const plain = await getSubmission(a.key, await createSubmission(a.key));
    expect(plain.description).toBe("");
  });

  it("refuses another submission_type with 422 naming the supported values, and creates nothing", async () => {
    const before = (await json(await call("/api/v1/submissions?limit=100", { key: a.key }))).results.length;
    const err = await expectError(
      await call("/api/v1/submissions", { key: a.key, body: job({ submission_type: "quick" }) }),
      422,
      "unsupported_submission_type",
    );
    expect(err.details).toEqual({
      field: "submission_type",
      supported: [
        "new",
        "quick_binary_subset_sum",
        "quick_knapsack",
        "quick_sklearn_rfc_hyperparameters",
        "quick_sklearn_svc_hyperparameters",
        "quick_sklearn_knn_hyperparameters",
        "quick_sklearn_logreg_hyperparameters",
        "quick_keras_xor_training",
      ],
    });
    expect(err.message).toContain("new");
    expect((await json(await call("/api/v1/submissions?limit=100", { key: a.key }))).results.length).toBe(before);
  });

  it("refuses webhook_url and notification_email by name (422)", async () => {
    const one = await expectError(
      await call("/api/v1/submissions", { key: a.key, body: job({ webhook_url: "https://example.com/h" }) }),
      422,
      "unsupported_field",
    );
    expect(one.details.fields).toEqual(["webhook_url"]);
    const both = await expectError(
      await call("/api/v1/submissions", {
        key: a.key,
        body: job({ webhook_url: "https://example.com/h", notification_email: "me@example.com" }),
      }),
      422,
      "unsupported_field",
    );
    expect(both.details.fields).toEqual(["webhook_url", "notification_email"]);
  });

  it("bounds the description at 2,000 characters and refuses a lone surrogate", async () => {
    const b = await newAccount(); // a's concurrency slots are taken by the submissions above
    expect((await call("/api/v1/submissions", { key: b.key, body: job({ description: "d".repeat(2000) }) })).status).toBe(202);
    const long = await expectError(
      await call("/api/v1/submissions", { key: b.key, body: job({ description: "d".repeat(2001) }) }),
      400,
      "validation_failed",
    );
    expect(long.details.fields[0].field).toBe("description");
    await expectError(await call("/api/v1/submissions", { key: b.key, body: job({ description: "x\ud800" }) }), 400, "validation_failed");
  });
});
