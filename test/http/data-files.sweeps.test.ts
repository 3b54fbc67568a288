// Data files in a sweep's base (docs/api.md#sweep-data-files): every child records them as a submission
// does, so each child's run fetches them — after the listing is deleted too; a bad id is refused at
// base.data_files[i] with nothing created; a grid cannot vary them; deleting the sweep lets the bytes go.
import { describe, expect, it } from "vitest";
import { accountPerTest, call, env, expectError, fetchRunDataFile, json, newDataFile, newRoomyAccount } from "../helpers/api";
import { childRuns, createSweep, sweepBody } from "../helpers/sweeps";

const CSV = "job,duration\na,3\nb,5\n";

const a = accountPerTest();

/** A sweep body whose base names `dataFiles`: 2 combinations × 2 seeds. */
function withFiles(dataFiles: string[], overrides: Record<string, unknown> = {}) {
  const body = sweepBody({ grid: { sol_per_pop: [10, 20] }, seeds: 2, ...overrides });
  return { ...body, base: { ...(body.base as Record<string, unknown>), data_files: dataFiles } };
}

const recorded = async (submissionId: string) =>
  (await env.DB.prepare("SELECT data_file_id, name, sha256 FROM submission_data_files WHERE submission_id = ?").bind(submissionId).all())
    .results;

const sweepCount = async (accountId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM sweeps WHERE account_id = ?").bind(accountId).first<{ n: number }>())!.n;

describe("data_files in a sweep's base", () => {
  it("every child records the base's files; each child's run fetches them, still after the listing is deleted", async () => {
    const jobs = await newDataFile(a.key, "jobs.csv", CSV);
    const sweep = await createSweep(a.key, withFiles([jobs.id]));
    const children = await childRuns(sweep.id);
    expect(children).toHaveLength(4);
    for (const child of children) {
      expect(await recorded(child.submission_id)).toEqual([{ data_file_id: jobs.id, name: "jobs.csv", sha256: jobs.sha256 }]);
      const submission = await json(await call(`/api/v1/submissions/${child.submission_id}`, { key: a.key }));
      expect(submission.parameters.data_files).toEqual([jobs.id]);
    }
    expect((await json(await call(`/api/v1/sweeps/${sweep.id}`, { key: a.key }))).base.data_files).toEqual([jobs.id]);

    expect((await call(`/api/v1/data-files/${jobs.id}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    for (const child of children) {
      // The GA worker fetches a file of a run that has started (what its claim does).
      await env.DB.prepare("UPDATE runs SET status = 'running', started_at = ?, awaiting_slot = 0 WHERE id = ?")
        .bind(new Date().toISOString(), child.id)
        .run();
      const fetched = await fetchRunDataFile(child.id, jobs.sha256);
      expect(fetched.status).toBe(200);
      expect(await fetched.text()).toBe(CSV);
    }
  });

  it("an unknown or another account's id is 422 data_file_not_found at base.data_files[i]; nothing is created", async () => {
    const mine = await newDataFile(a.key, "mine.csv", CSV);
    const before = await sweepCount(a.id);
    const unknown = await expectError(
      await call("/api/v1/sweeps", { key: a.key, body: withFiles([mine.id, "nosuchfile00"]) }),
      422,
      "data_file_not_found",
    );
    expect(unknown.details.field).toBe("base.data_files[1]");
    const b = await newRoomyAccount();
    const theirs = await newDataFile(b.key, "theirs.csv", CSV);
    const foreign = await expectError(
      await call("/api/v1/sweeps", { key: a.key, body: withFiles([theirs.id]) }),
      422,
      "data_file_not_found",
    );
    expect(foreign.details.field).toBe("base.data_files[0]");
    const twice = await expectError(
      await call("/api/v1/sweeps", { key: a.key, body: withFiles([mine.id, mine.id]) }),
      422,
      "invalid_data_file_name",
    );
    expect(twice.details.field).toBe("base.data_files[1]");
    expect(await sweepCount(a.id)).toBe(before);
  });

  it("a grid cannot vary data_files (400 naming grid.data_files)", async () => {
    const one = await newDataFile(a.key, "one.csv", CSV);
    const two = await newDataFile(a.key, "two.csv", "x\n");
    const refused = await expectError(
      await call("/api/v1/sweeps", { key: a.key, body: sweepBody({ grid: { data_files: [[one.id], [two.id]] }, seeds: 1 }) }),
      400,
      "validation_failed",
    );
    expect(JSON.stringify(refused.details)).toContain("grid.data_files");
    expect(JSON.stringify(refused.details)).toContain("every child reads the base's data_files");
  });

  it("deleting the sweep drops its children's records: with the listing gone, the bytes go with it", async () => {
    const jobs = await newDataFile(a.key, "jobs.csv", CSV);
    const sweep = await createSweep(a.key, withFiles([jobs.id]));
    const blob = () =>
      env.DB.prepare("SELECT r2_key FROM data_blobs WHERE account_id = ? AND sha256 = ?")
        .bind(a.id, jobs.sha256)
        .first<{ r2_key: string }>();
    const key = (await blob())!.r2_key;
    expect((await call(`/api/v1/data-files/${jobs.id}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    expect(await env.FILES.head(key)).not.toBeNull(); // the children still name them
    const deleted = await call(`/api/v1/sweeps/${sweep.id}`, { key: a.key, method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM submission_data_files WHERE account_id = ?").bind(a.id).first<{ n: number }>())!.n,
    ).toBe(0);
    expect(await blob()).toBeNull();
    expect(await env.FILES.head(key)).toBeNull();
  });
});
