// The dashboard's sweeps and the comparison of runs, inside workerd (docs/dashboard.md#sweeps, #compare):
// the sweep form makes the API's body and passes its rules (errors next to their field or grid row, the
// children cap above the form), the sweep's page (box plots, statistics in words, live counts, cancel),
// lists naming runs by kind and id with a checkbox each, and /compare — the canonical shareable address,
// the cap, another account's run 404, the differing parameters and the curves.
import { describe, expect, it } from "vitest";
import { admin, call, createSubmission, FITNESS, json, latestRunId, newAccount, newResult } from "../helpers/api";
import { childRuns, createSweep, finishChildren, sweepBody } from "../helpers/sweeps";
import { WebClient } from "../helpers/web";

async function signedIn(key: string) {
  const web = new WebClient();
  expect((await web.signInWithKey(key)).status).toBe(303);
  return web;
}

const sweepForm = (extra: Record<string, string> = {}) => ({
  name: "web sweep",
  num_generations: "20",
  sol_per_pop: "10",
  num_parents_mating: "4",
  num_genes: "3",
  fitness_func: FITNESS,
  fitness_func_entry: "fitness",
  grid_param_0: "sol_per_pop",
  grid_values_0: "10, 20",
  grid_param_1: "mutation_type",
  grid_values_1: "random, swap",
  seeds: "2",
  payment: "plan",
  ...extra,
});

const text = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describe("the sweep form", () => {
  it("creates a web sweep of combinations × seeds, paid on the plan, and opens its page", async () => {
    const a = await newAccount();
    const web = await signedIn(a.key);
    const form = await (await web.request("/sweeps/new")).text();
    expect(form).toContain('name="grid_param_0"');
    expect(form).toMatch(/data-cap-plan="200"/);
    const res = await web.post("/sweeps/new", sweepForm());
    expect(res.status).toBe(303);
    const id = res.headers.get("Location")!.split("/").at(-1)!;
    const sweep = await json(await call(`/api/v1/sweeps/${id}`, { key: a.key }));
    expect(sweep).toMatchObject({ name: "web sweep", source: "web", payment: "plan", seeds: 2, children: 8 });
    expect(sweep.grid).toEqual({ sol_per_pop: [10, 20], mutation_type: ["random", "swap"] });
    expect(sweep.base).not.toHaveProperty("sol_per_pop"); // the grid's, not the base's
    const page = text(await (await web.request(`/sweeps/${id}`)).text());
    expect(page).toContain("of 8 children");
    expect(page).toContain("Compare its runs");
  });

  it("shows the API's errors next to their fields and grid rows, and creates nothing", async () => {
    const a = await newAccount();
    const web = await signedIn(a.key);
    const res = await web.post(
      "/sweeps/new",
      sweepForm({ num_parents_mating: "8", grid_values_0: "10, 6", grid_param_1: "mutation_type", grid_values_1: "random, sideways" }),
    );
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('id="f-grid_values_1-error"');
    expect(text(html)).toContain("value 2:");
    const again = await web.post("/sweeps/new", sweepForm({ num_parents_mating: "8", grid_values_0: "10, 6" }));
    expect(again.status).toBe(400);
    expect(text(await again.text())).toMatch(/must be at most sol_per_pop \(6\) \(in the combination sol_per_pop=6/);
    expect((await json(await call("/api/v1/sweeps", { key: a.key }))).results).toEqual([]);
  });

  it("shows a refusal of the creation (an entry symbol the code does not define) next to its field", async () => {
    const a = await newAccount();
    const web = await signedIn(a.key);
    const res = await web.post("/sweeps/new", sweepForm({ fitness_func_entry: "nowhere" }));
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toContain('id="f-fitness_func_entry-error"');
    expect(text(html)).toContain("nowhere");
    expect((await json(await call("/api/v1/sweeps", { key: a.key }))).results).toEqual([]);
  });

  it("refuses more children than the cap above the form, with the figures", async () => {
    const a = await newAccount("free");
    const web = await signedIn(a.key);
    const res = await web.post("/sweeps/new", sweepForm({ seeds: "6" })); // 24 children, the Free plan's cap is 20
    expect(res.status).toBe(403);
    expect(text(await res.text())).toContain("your limit is 20 per sweep");
    // With credits the cap in force is Premium's.
    expect((await web.post("/sweeps/new", sweepForm({ seeds: "6", payment: "credits" }))).status).toBe(303);
  });
});

describe("a sweep's page", () => {
  it("draws a box plot per combination, the best highlighted, and says each p-value in words", async () => {
    const a = await newAccount();
    const sweep = await createSweep(a.key, sweepBody({ grid: { sol_per_pop: [10, 20] }, seeds: 3 }));
    await finishChildren(sweep.id, 2, (c, s) => (c === 1 ? -0.1 * (s + 1) : -1 - s));
    const web = await signedIn(a.key);
    const html = await (await web.request(`/sweeps/${sweep.id}`)).text();
    expect(html).toContain('class="box-plot"');
    expect(html.match(/data-combination="\d"/g)?.length).toBe(4); // a box and a table row per combination
    expect(html).toMatch(/<g class="best" data-combination="1">/);
    const words = text(html);
    expect(words).toContain("The best combination is 1: sol_per_pop=20");
    expect(words).toContain("no evidence of a difference at 5 %");
    expect(words).toContain("exact test");
    expect(html).toContain(`/compare?runs=`);
  });

  it("serves its counts to poll while it runs; cancel works from the page", async () => {
    const a = await newAccount();
    await admin(`/accounts/${a.id}`, { method: "PATCH", body: { overrides: { concurrent_submissions: 1 } } });
    const sweep = await createSweep(a.key, sweepBody({ grid: { sol_per_pop: [10, 20] }, seeds: 1 }));
    const web = await signedIn(a.key);
    expect(await (await web.request(`/sweeps/${sweep.id}`)).text()).toContain(`data-sweep-live="/sweeps/${sweep.id}/live"`);
    expect(await json(await web.request(`/sweeps/${sweep.id}/live`))).toEqual({
      status: "running",
      counts: { queued: 2, running: 0, succeeded: 0, failed: 0, cancelled: 0, waiting: 1 },
    });
    const cancelled = await web.post(`/sweeps/${sweep.id}/cancel`);
    expect(cancelled.status).toBe(303);
    expect(WebClient.flashOf(cancelled)).toContain("cancelled");
    expect((await json(await web.request(`/sweeps/${sweep.id}/live`))).status).toBe("cancelled");
    expect((await web.request("/sweeps")).status).toBe(200);
  });

  it("is 404 for another account", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const sweep = await createSweep(b.key, sweepBody({ seeds: 1 }));
    const web = await signedIn(a.key);
    for (const path of [`/sweeps/${sweep.id}`, `/sweeps/${sweep.id}/live`]) expect((await web.request(path)).status, path).toBe(404);
    expect((await web.post(`/sweeps/${sweep.id}/cancel`)).status).toBe(404);
    expect((await web.post(`/sweeps/${sweep.id}/delete`)).status).toBe(404);
    expect((await json(await call(`/api/v1/sweeps/${sweep.id}`, { key: b.key }))).status).toBe("running");
  });
});

describe("lists name runs by kind and id, with a box to tick", () => {
  it("the submissions list, a submission's runs and the results list", async () => {
    const a = await newAccount();
    const { submissionId, resultId } = await newResult(a.key, { name: "alike" });
    const runId = await latestRunId(a.key, submissionId);
    const web = await signedIn(a.key);
    for (const path of ["/submissions", `/submissions/${submissionId}`, "/results"]) {
      const html = await (await web.request(path)).text();
      expect(html, path).toContain(`name="runs" value="${runId}" form="compare-form"`);
      expect(html, path).toContain('<form id="compare-form" method="get" action="/compare"');
      expect(text(html), path).toContain(`initial ${runId}`);
    }
    // The result's page and its chart name the run too.
    expect(text(await (await web.request(`/results/${resultId}`)).text())).toContain(`Result of run ${runId} (initial)`);
  });
});

describe("/compare", () => {
  it("answers the boxes' repeated runs= with the canonical address, then both curves and what differs", async () => {
    const a = await newAccount();
    const one = await newResult(a.key, { name: "small", sol_per_pop: 10 });
    const two = await newResult(a.key, { name: "large", sol_per_pop: 20 }, { fitness: -0.25 });
    const [r1, r2] = [await latestRunId(a.key, one.submissionId), await latestRunId(a.key, two.submissionId)];
    const web = await signedIn(a.key);
    const redirect = await web.request(`/compare?runs=${r1}&runs=${r2}&runs=${r1}`);
    expect(redirect.status).toBe(303);
    expect(redirect.headers.get("Location")).toBe(`/compare?runs=${r1},${r2}`);
    const res = await web.request(`/compare?runs=${r1},${r2}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const chart = JSON.parse(/<script type="application\/json" id="compare-chart">(.*?)<\/script>/s.exec(html)![1]!);
    expect(chart.panels[0].series.map((s: any) => s.label)).toEqual([`small · initial ${r1}`, `large · initial ${r2}`]);
    const differ = /<table class="compact params-differ">(.*?)<\/table>/s.exec(html)![1]!;
    expect(text(differ)).toMatch(/sol_per_pop 10 20/);
    expect(text(differ)).not.toContain("num_genes");
    expect(text(html)).toMatch(/The \d+ parameters they share/);
  });

  it("compares runs still running (their progress) and a run without a result", async () => {
    const a = await newAccount();
    const sub = await createSubmission(a.key);
    const run = await latestRunId(a.key, sub);
    const web = await signedIn(a.key);
    const html = await (await web.request(`/compare?runs=${run}`)).text();
    expect(html).toContain("drawn from its progress reports");
  });

  it("refuses more than 12 runs with a clear message, and another account's run is 404", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const mine = await latestRunId(a.key, await createSubmission(a.key));
    const theirs = await latestRunId(b.key, await createSubmission(b.key));
    const web = await signedIn(a.key);
    const ids = Array.from({ length: 13 }, (_, i) => `run${String(i).padStart(9, "0")}`);
    const tooMany = await web.request(`/compare?runs=${ids.join(",")}`);
    expect(tooMany.status).toBe(400);
    expect(text(await tooMany.text())).toContain("You picked 13 runs; at most 12 can be compared at once.");
    expect((await web.request(`/compare?runs=${mine},${theirs}`)).status).toBe(404);
    expect((await web.request(`/compare?runs=${mine}`)).status).toBe(200);
    expect((await web.request("/compare")).status).toBe(200);
  });

  it("a result whose submission was deleted still compares by its run's id", async () => {
    const a = await newAccount();
    const { submissionId } = await newResult(a.key);
    const run = await latestRunId(a.key, submissionId);
    expect((await call(`/api/v1/submissions/${submissionId}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    const web = await signedIn(a.key);
    expect((await web.request(`/compare?runs=${run}`)).status).toBe(200);
  });

  it("needs a session", async () => {
    const res = await new WebClient().request("/compare?runs=abc");
    expect(res.status).toBe(303);
  });
});

describe("a sweep's children", () => {
  it("say they are a sweep's on their page", async () => {
    const a = await newAccount();
    const sweep = await createSweep(a.key, sweepBody({ seeds: 1 }));
    const child = (await childRuns(sweep.id))[0]!;
    const web = await signedIn(a.key);
    expect(await (await web.request(`/submissions/${child.submission_id}`)).text()).toContain(`href="/sweeps/${sweep.id}"`);
  });
});
