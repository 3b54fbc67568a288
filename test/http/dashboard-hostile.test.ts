// Hostile text on every dashboard page that shows it (docs/dashboard.md): submission names and
// descriptions, fitness and callback source, a run's output, error and warnings (what user code prints
// and raises), and an import's fields (name, description, code, origin — all of them the client's), on
// the owner's pages and on the public page of a shared result. Every one is escaped as text.
import { describe, expect, it } from "vitest";
import { call, createSubmission, finishSubmission, importBody, json, newAccount } from "../helpers/api";
import { WebClient } from "../helpers/web";

const HOSTILE = `"'><img src=x onerror=alert(1)><svg onload=alert(2)></script><script>alert(3)</script></textarea><!--`;
const RAW = ["<img src=x", "<svg onload", "<script>alert", "</textarea><!--"];

function expectEscaped(path: string, html: string) {
  for (const marker of RAW) expect(html.includes(marker), `${path} shows ${marker} unescaped`).toBe(false);
}

describe("hostile text on the dashboard", () => {
  it("is escaped on the lists, the submission, its form, the result and the public page, for runs and imports", async () => {
    const account = await newAccount();
    const code = `def fitness(ga, solution, idx):\n    return 0.0\n# ${HOSTILE}\n`;
    const submissionId = await createSubmission(account.key, {
      name: `N${HOSTILE}`,
      description: `D${HOSTILE}`,
      fitness_func: code,
      fitness_func_entry: "fitness",
    });
    const resultId = await finishSubmission(account.key, submissionId, {
      output: `printed ${HOSTILE}`,
      warnings: [{ message: `UserWarning: ${HOSTILE}`, count: 2 }],
    });
    const failedId = await createSubmission(account.key, { name: `F${HOSTILE}` });
    await finishSubmission(account.key, failedId, {
      status: "failed",
      error: { code: "code_error", message: `fitness_func line 3: ValueError: ${HOSTILE}` },
      output: HOSTILE,
    });
    const imported = await json(
      await call("/api/v1/imports", {
        key: account.key,
        body: importBody({
          name: `I${HOSTILE}`,
          description: `ID${HOSTILE}`,
          code: { fitness_func: code, fitness_func_entry: "fitness" },
          origin: { client: HOSTILE, sdk_version: HOSTILE },
        }),
      }),
    );
    expect(imported.result_id).toBeTruthy();

    const web = new WebClient();
    expect((await web.signInWithKey(account.key)).status).toBe(303);
    const pages = [
      "/submissions",
      "/results",
      `/submissions/${submissionId}`,
      `/submissions/${failedId}`,
      `/submissions/${imported.id}`,
      `/submissions/new?from=${submissionId}`,
      `/submissions/new?from=${imported.id}`,
      `/results/${resultId}`,
      `/results/${imported.result_id}`,
    ];
    for (const path of pages) {
      const page = await web.request(path);
      expect(page.status, path).toBe(200);
      const html = await page.text();
      expectEscaped(path, html);
      if (!path.startsWith("/submissions/new")) expect(html, path).toContain("onerror=alert(1)"); // shown, as text
    }
    for (const id of [resultId, imported.result_id]) {
      expect((await web.post(`/results/${id}/share`, { is_shared: "true" })).status).toBe(303);
      const shared = await new WebClient().request(`/shared/${id}`);
      expect(shared.status).toBe(200);
      expectEscaped(`/shared/${id}`, await shared.text());
    }
  });
});
