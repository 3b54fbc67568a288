// A run's logs — its own stdout and stderr as the GA worker kept them (≤ 64 KiB): the submission row
// shows the latest run's last 8 KiB, the result carries the whole text as logs.txt (docs/api.md).
import { beforeAll, describe, expect, it } from "vitest";
import { call, completeRun, createSubmission, getSubmission, json, newAccount, type TestAccount } from "../helpers/api";

let a: TestAccount;
beforeAll(async () => {
  a = await newAccount();
});

async function finished(output: string) {
  const id = await createSubmission(a.key);
  const runId = (await getSubmission(a.key, id)).latest_run.id;
  expect((await completeRun(runId, { output })).status).toBeLessThan(300);
  const results = await json(await call(`/api/v1/results?submission_id=${id}`, { key: a.key }));
  return { row: await getSubmission(a.key, id), resultId: results.results[0].id as string };
}

describe("run logs", () => {
  it("shows short logs whole on the submission and as logs.txt of the result", async () => {
    const { row, resultId } = await finished("generation 1\nbest 0.5 ✓\n");
    expect(row).toMatchObject({ logs: "generation 1\nbest 0.5 ✓\n", logs_truncated: false });
    const result = await json(await call(`/api/v1/results/${resultId}`, { key: a.key }));
    expect(result.files.map((f: { name: string }) => f.name)).toContain("logs.txt");
    const file = await call(`/api/v1/results/${resultId}/files/logs.txt`, { key: a.key });
    expect(file.headers.get("Content-Type")).toContain("text/plain");
    expect(await file.text()).toBe("generation 1\nbest 0.5 ✓\n");
  });

  it("shows the last 8 KiB of long logs, cut at a character boundary, and keeps the whole text in logs.txt", async () => {
    const output = `${"é".repeat(5000)}END`; // 10,003 bytes of UTF-8
    const { row, resultId } = await finished(output);
    expect(row.logs_truncated).toBe(true);
    expect(new TextEncoder().encode(row.logs).byteLength).toBeLessThanOrEqual(8 * 1024);
    expect(row.logs.endsWith("END")).toBe(true);
    expect(row.logs).not.toContain("\ufffd");
    expect(await (await call(`/api/v1/results/${resultId}/files/logs.txt`, { key: a.key })).text()).toBe(output);
  });

  it("has empty logs and no logs.txt when the run printed nothing", async () => {
    const { row, resultId } = await finished("");
    expect(row).toMatchObject({ logs: "", logs_truncated: false });
    const result = await json(await call(`/api/v1/results/${resultId}`, { key: a.key }));
    expect(result.files.map((f: { name: string }) => f.name)).not.toContain("logs.txt");
  });
});
