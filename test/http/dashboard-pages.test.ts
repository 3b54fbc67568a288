// The dashboard's pages and actions inside workerd (docs/dashboard.md): another account's data is 404,
// website runs (paid by the plan or with credits) go through the same gates, fire no events, the form
// takes every form the API accepts and its field errors name the API's fields and create nothing, the
// public page of a shared result, error pages.
import { describe, expect, it } from "vitest";
import { FORM_FIELDS } from "../../src/dashboard/submissions/forms";
import { CODE_FIELDS, GA_PARAMETER_NAMES } from "../../src/model/parameters";
import { admin, call, dbSubmissionCount, env, finishSubmission, getSubmission, json, newAccount, newResult } from "../helpers/api";
import { WebClient } from "../helpers/web";

const FITNESS = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n";
const TWO =
  "import numpy\n\ndef fitness(ga, solution, idx):\n    return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2))]\n";
const form = (extra: Record<string, string> = {}) => ({
  name: "web job",
  num_generations: "20",
  sol_per_pop: "10",
  num_parents_mating: "4",
  num_genes: "3",
  fitness_func: FITNESS,
  fitness_func_entry: "fitness",
  ...extra,
});

async function signedIn(key: string) {
  const web = new WebClient();
  expect((await web.signInWithKey(key)).status).toBe(303);
  return web;
}

describe("a session never sees another account's data", () => {
  it("every page and action on account B's ids is 404 for a session of account A, and changes nothing", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const { submissionId, resultId } = await newResult(b.key);
    const hook = await json(
      await call("/api/v1/webhooks", { key: b.key, body: { url: "https://93.184.215.14/in", events: ["submission.succeeded"] } }),
    );
    const web = await signedIn(a.key);
    for (const path of [
      `/submissions/${submissionId}`,
      `/submissions/${submissionId}/live`,
      `/results/${resultId}`,
      `/results/${resultId}/files/result.json`,
      `/webhooks/${hook.id}`,
      `/submissions/new?from=${submissionId}`,
    ]) {
      const res = await web.request(path);
      expect(res.status, path).toBe(404);
      const html = await res.text();
      if (!path.endsWith("/live")) expect(html).toContain("belongs to another account");
    }
    for (const path of [
      `/submissions/${submissionId}/delete`,
      `/submissions/${submissionId}/reexecute`,
      `/results/${resultId}/share`,
      `/results/${resultId}/delete`,
      `/webhooks/${hook.id}/delete`,
      `/webhooks/${hook.id}/test`,
    ]) {
      expect((await web.post(path, { is_shared: "true" })).status, path).toBe(404);
    }
    expect(await dbSubmissionCount(b.id)).toBe(1);
    expect((await call(`/api/v1/results/${resultId}`, { key: b.key }).then(json)).is_shared).toBe(false);
    expect((await call(`/api/v1/webhooks/${hook.id}`, { key: b.key })).status).toBe(200);
  });
});

describe("the new-submission form", () => {
  it("lists every creation parameter the API accepts (a new schema field appears under Other)", () => {
    // A custom operator's code field fills its operator (`param`), whose select keeps PyGAD's names.
    const names = new Set(FORM_FIELDS.flatMap((f) => (f.kind === "code" ? [f.param ?? f.name, `${f.param ?? f.name}_entry`] : [f.name])));
    for (const p of GA_PARAMETER_NAMES) expect(names.has(p), p).toBe(true);
    for (const f of CODE_FIELDS)
      expect(FORM_FIELDS.find((x) => x.kind === "code" && (x.param ?? x.name) === f)?.group, f).toMatch(/basic|callbacks|custom/);
    expect(names.has("name") && names.has("description")).toBe(true);
  });

  it("a bad field is shown next to the field with the API's words and creates nothing", async () => {
    const account = await newAccount();
    const web = await signedIn(account.key);
    const res = await web.post("/submissions/new", form({ sol_per_pop: "1", num_genes: "three", fitness_func_entry: "missing" }));
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toMatch(/id="f-sol_per_pop-error">[^<]*expected number to be &gt;=2/);
    expect(html).toContain('id="f-num_genes-error">must be a number');
    expect(html).toContain('aria-invalid="true"');
    expect(html).toContain("three"); // the person's input is kept
    const entry = await web.post("/submissions/new", form({ fitness_func_entry: "missing" }));
    expect(entry.status).toBe(422);
    expect(await entry.text()).toMatch(/id="f-fitness_func_entry-error">[^<]*not a top-level name/);
    expect(await dbSubmissionCount(account.id)).toBe(0);
  });

  it("a gate's refusal is shown in words above the form (the plan's caps for a run on the plan)", async () => {
    const account = await newAccount("free", 0);
    const web = await signedIn(account.key);
    const res = await web.post("/submissions/new", form({ num_generations: "500", payment: "plan" }));
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("num_generations 500 is over your limit of 100");
    expect(await dbSubmissionCount(account.id)).toBe(0);
    // With credits the same run passes (Premium caps) — and the free account has no credits: still allowed down to -1.00.
    const paid = await web.post("/submissions/new", form({ num_generations: "500", payment: "credits" }));
    expect(paid.status).toBe(303);
  });
});

let lastCreated = "";
async function created(web: WebClient, key: string, extra: Record<string, string>) {
  const res = await web.post("/submissions/new", form(extra));
  expect(res.status, await res.clone().text()).toBe(303);
  lastCreated = res.headers.get("Location")!.split("/").pop()!;
  return (await getSubmission(key, lastCreated)).parameters;
}

describe("the form takes every form the API accepts", () => {
  it("PyGAD 3.9's parameters and a custom operator: its code and entry fill the operator's field, and a copy puts them back", async () => {
    const account = await newAccount();
    const web = await signedIn(account.key);
    const mix = "import numpy\n\ndef mix(parents, offspring_size, ga):\n    return numpy.zeros(offspring_size)\n";
    expect(
      await created(web, account.key, {
        crossover_type: "single_point", // the custom code takes its place
        custom_crossover_type: mix,
        crossover_type_entry: "mix",
        mutation_type: "polynomial",
        polynomial_mutation_eta: "5",
        suppress_warnings: "true",
        initial_population: JSON.stringify(Array.from({ length: 10 }, (_, i) => [i, 0, 1])),
      }),
    ).toMatchObject({ crossover_type: mix, crossover_type_entry: "mix", mutation_type: "polynomial", polynomial_mutation_eta: 5 });
    expect((await getSubmission(account.key, lastCreated)).has_initial_population).toBe(true);
    const copy = await (await web.request(`/submissions/new?from=${lastCreated}`)).text();
    expect(copy).toContain('name="custom_crossover_type"');
    expect(copy).toContain("def mix(parents, offspring_size, ga):");
    expect(copy).toContain('name="crossover_type_entry" value="mix"');
    // A misspelt operator is said next to its select; code without its entry next to the code.
    const typo = await web.post("/submissions/new", form({ crossover_type: "sbxx" }));
    expect(typo.status).toBe(400);
    expect(await typo.text()).toMatch(/id="f-crossover_type-error">[^<]*is not one of PyGAD(&#39;|')s crossover_type names/);
    const nsga3 = await created(web, account.key, { parent_selection_type: "nsga3", nsga3_num_divisions: "3", fitness_func: TWO });
    expect(nsga3).toMatchObject({ parent_selection_type: "nsga3", nsga3_num_divisions: 3 });
    const page = await (await web.request("/submissions/new")).text();
    for (const option of ["nsga3", "tournament_nsga3", "sbx", "polynomial"]) expect(page).toContain(`<option value="${option}">`);
  });

  it("per-gene lists, gene_type pairs and per-gene types, nsga2, stop criteria, saved solutions and a null operator reach the API's body", async () => {
    const account = await newAccount();
    const web = await signedIn(account.key);
    expect(
      await created(web, account.key, {
        init_range_low: "0, 0, -5",
        init_range_high: "[1, 1, 5]",
        random_mutation_min_val: "-1 -1 0",
        random_mutation_max_val: "1, 1, 0",
        gene_type: '["float", 2]',
        stop_criteria: "reach_1e-3, time_60, evaluations_500",
        save_solutions: "true",
        save_best_solutions: "false",
        crossover_type: "null",
        mutation_type: "random",
      }),
    ).toMatchObject({
      init_range_low: [0, 0, -5],
      init_range_high: [1, 1, 5],
      random_mutation_min_val: [-1, -1, 0],
      random_mutation_max_val: [1, 1, 0],
      gene_type: ["float", 2],
      stop_criteria: ["reach_1e-3", "time_60", "evaluations_500"],
      save_solutions: true,
      save_best_solutions: false,
      crossover_type: null,
    });
    expect(
      await created(web, account.key, { gene_type: "int, float, float32", stop_criteria: "saturate_1e2", init_range_low: "-2" }),
    ).toMatchObject({ gene_type: ["int", "float", "float32"], stop_criteria: "saturate_1e2", init_range_low: -2 });
    expect(
      await created(web, account.key, {
        gene_type: '[["float", 1], "int", "uint8"]',
        stop_criteria: '["reach_0.5_0.5"]',
        parent_selection_type: "nsga2",
        fitness_func: TWO,
      }),
    ).toMatchObject({
      gene_type: [["float", 1], "int", "uint8"],
      stop_criteria: ["reach_0.5_0.5"],
      parent_selection_type: "nsga2",
    });
    // A copy of a submission fills the form with its values (lists as JSON), which the form takes back.
    const copy = await (await web.request(`/submissions/new?from=${lastCreated}`)).text();
    expect(copy).toContain(
      'name="gene_type" aria-describedby="f-gene_type-hint" value="[[&quot;float&quot;,1],&quot;int&quot;,&quot;uint8&quot;]"',
    );
    expect(copy).toContain('name="stop_criteria" aria-describedby="f-stop_criteria-hint" value="[&quot;reach_0.5_0.5&quot;]"');
    expect(copy).toContain('<option value="nsga2" selected="">nsga2</option>');
    expect(
      await created(web, account.key, { parent_selection_type: "tournament_nsga2", K_tournament: "3", fitness_func: TWO }),
    ).toMatchObject({ parent_selection_type: "tournament_nsga2", K_tournament: 3 });
    // The choices are the schema's: nsga2 and tournament_nsga2 offered, "none" for a nullable operator.
    const page = await (await web.request("/submissions/new")).text();
    expect(page).toContain('<option value="tournament_nsga2">tournament_nsga2</option>');
    expect(page).toContain('<option value="null">none (no crossover)</option>');
    expect(page).toContain('<datalist id="f-gene_type-suggestions">');
  });

  it("bad values of the new forms get their error next to the field, and nothing is created", async () => {
    const account = await newAccount();
    const web = await signedIn(account.key);
    const res = await web.post(
      "/submissions/new",
      form({
        init_range_low: "0, x, 1",
        init_range_high: "1, 2",
        gene_type: "floaty",
        stop_criteria: "reach_1, evaluations_1.5",
      }),
    );
    expect(res.status).toBe(400);
    const html = await res.text();
    const errorOf = (field: string) => new RegExp(`id="f-${field}-error">([^<]*)<`).exec(html)?.[1];
    expect(errorOf("init_range_low")).toBe("must be a number, or a list of numbers (one per gene) such as 0, 0.5, -1");
    expect(errorOf("gene_type")).toContain("Invalid input: expected int, float, a numpy type");
    expect(errorOf("stop_criteria")).toBe("item 2: evaluations takes a positive whole number");
    expect(html).toContain('id="f-gene_type" name="gene_type" aria-describedby="f-gene_type-hint f-gene_type-error" aria-invalid="true"');
    expect(html).toContain('value="reach_1, evaluations_1.5"'); // the person's input is kept
    expect(await dbSubmissionCount(account.id)).toBe(0);
    // The rules between fields (checked once every field has its type) show next to their field too.
    const between = await web.post(
      "/submissions/new",
      form({
        init_range_low: "0, 0",
        init_range_high: "1, 1",
        random_mutation_min_val: "[1, 2, 3]",
        save_solutions: "true",
        num_generations: "100000",
      }),
    );
    expect(between.status).toBe(400);
    const betweenHtml = await between.text();
    const betweenError = (field: string) => new RegExp(`id="f-${field}-error">([^<]*)<`).exec(betweenHtml)?.[1];
    expect(betweenError("init_range_low")).toBe("a list needs exactly num_genes (3) values");
    expect(betweenError("random_mutation_min_val")).toBe(
      "random_mutation_min_val and random_mutation_max_val must both be numbers or both be lists (one value per gene)",
    );
    expect(betweenError("save_solutions")).toMatch(/^keeps \(num_generations \+ 1\) × sol_per_pop × num_genes = 3000030 gene values/);
    expect(await dbSubmissionCount(account.id)).toBe(0);
  });
});

describe("website runs", () => {
  it("source web; on the plan: not in flight, no charge; with credits: in flight and charged; neither fires a webhook event", async () => {
    const account = await newAccount();
    await call("/api/v1/webhooks", {
      key: account.key,
      body: { url: "https://93.184.215.14/in", events: ["submission.succeeded", "submission.failed"] },
    });
    const web = await signedIn(account.key);
    const onPlan = await web.post("/submissions/new", form({ payment: "plan" }));
    expect(onPlan.status).toBe(303);
    const planId = onPlan.headers.get("Location")!.split("/").pop()!;
    const withCredits = await web.post("/submissions/new", form({ payment: "credits", name: "credit job" }));
    const creditId = withCredits.headers.get("Location")!.split("/").pop()!;
    const usage = (await json(await call("/api/v1/account", { key: account.key }))).usage;
    expect(usage).toMatchObject({ concurrent_submissions: 2, inflight_api_runs: 1 });
    const rows = await env.DB.prepare(
      "SELECT s.id, s.source, r.paid_with_credits FROM submissions s JOIN runs r ON r.id = s.latest_run_id WHERE s.account_id = ? ORDER BY s.name",
    )
      .bind(account.id)
      .all();
    expect(rows.results).toEqual([
      { id: creditId, source: "web", paid_with_credits: 1 },
      { id: planId, source: "web", paid_with_credits: 0 },
    ]);
    await finishSubmission(account.key, planId);
    await finishSubmission(account.key, creditId);
    const ledger = await env.DB.prepare(
      "SELECT submission_id, amount_micro FROM credit_ledger WHERE account_id = ? AND kind = 'run_charge'",
    )
      .bind(account.id)
      .all();
    expect(ledger.results).toEqual([{ submission_id: creditId, amount_micro: expect.any(Number) }]);
    expect((ledger.results[0] as { amount_micro: number }).amount_micro).toBeLessThan(0);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM events WHERE account_id = ?").bind(account.id).first<{ n: number }>())!.n).toBe(
      0,
    );
    const listed = await web.request("/submissions?source=web&ordering=name");
    const html = await listed.text();
    expect(html.indexOf("credit job")).toBeLessThan(html.indexOf("web job"));
  });

  it("the live endpoint shows the run's progress and its trail; cancel and reexecute go through the same domain code", async () => {
    const account = await newAccount();
    const web = await signedIn(account.key);
    const id = (await web.post("/submissions/new", form())).headers.get("Location")!.split("/").pop()!;
    const live = await json(await web.request(`/submissions/${id}/live`));
    expect(live).toMatchObject({ status: "queued", num_generations: 20, points: 0, panels: [{ series: [{ points: [] }] }] });
    const again = await web.post(`/submissions/${id}/reexecute`, { payment: "plan" });
    expect(again.status).toBe(303);
    expect(WebClient.flashOf(again)).toContain("invalid_state");
    expect((await web.post(`/submissions/${id}/cancel`)).status).toBe(303);
    // The next page shows the action's message once.
    const after = await (await web.request(`/submissions/${id}`)).text();
    expect(after).toContain('<p class="flash notice" role="status">The run was cancelled.</p>');
    expect(await (await web.request(`/submissions/${id}`)).text()).not.toContain("The run was cancelled.");
    expect((await json(await web.request(`/submissions/${id}/live`))).status).toBe("cancelled");
    const rerun = await web.post(`/submissions/${id}/reexecute`, { payment: "credits", num_generations: "7" });
    expect(WebClient.flashOf(rerun)).toContain("A new run is queued");
    const row = await env.DB.prepare(
      "SELECT kind, paid_with_credits, parameters FROM runs WHERE submission_id = ? ORDER BY created_at DESC",
    )
      .bind(id)
      .first<{ kind: string; paid_with_credits: number; parameters: string }>();
    expect(row).toMatchObject({ kind: "reexecute", paid_with_credits: 1 });
    expect(JSON.parse(row!.parameters).num_generations).toBe(7);
  });
});

describe("results and the public page", () => {
  it("share makes a public page without sign-in, code or other ids; unshare makes it 404", async () => {
    const account = await newAccount();
    const { submissionId, resultId } = await newResult(account.key, { name: "shared sphere" });
    const web = await signedIn(account.key);
    const anon = new WebClient();
    expect((await anon.request(`/shared/${resultId}`)).status).toBe(404);
    expect((await web.post(`/results/${resultId}/share`, { is_shared: "true" })).status).toBe(303);
    const page = await anon.request(`/shared/${resultId}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("shared sphere");
    expect(html).not.toContain("numpy.sum");
    expect(html).not.toContain(submissionId);
    expect(html).not.toContain(account.id);
    const publicFile = await anon.request(`/shared/${resultId}/files/fitness_history.csv`);
    expect(publicFile.status).toBe(200);
    expect(publicFile.headers.get("Cache-Control")).toBe("no-store");
    expect((await anon.request(`/shared/${resultId}/files/result.json`)).status).toBe(404);
    // The owner's downloads are private: never stored by a browser or a proxy.
    const ownFile = await web.request(`/results/${resultId}/files/result.json`);
    expect(ownFile.status).toBe(200);
    expect(ownFile.headers.get("Cache-Control")).toBe("no-store");
    expect((await web.post(`/results/${resultId}/rename`, { name: "renamed" })).status).toBe(303);
    expect((await json(await call(`/api/v1/results/${resultId}`, { key: account.key }))).name).toBe("renamed");
    expect((await web.post(`/results/${resultId}/share`, { is_shared: "false" })).status).toBe(303);
    expect((await anon.request(`/shared/${resultId}`)).status).toBe(404);
  });
});

describe("webhooks and keys in the dashboard", () => {
  it("a new webhook's secret is shown once; the Test limit is shown in words", async () => {
    const account = await newAccount();
    const web = await signedIn(account.key);
    const created = await web.post("/webhooks", {
      url: "https://93.184.215.14/hook",
      events: ["submission.succeeded", "submission.failed"],
      description: "ci",
      is_active: "true",
    });
    expect(created.status).toBe(200);
    const html = await created.text();
    const secret = /id="secret-value" class="secret-value">([0-9a-f]{64})</.exec(html)![1]!;
    const [hook] = (await json(await call("/api/v1/webhooks", { key: account.key }))).results;
    const page = await (await web.request(`/webhooks/${hook.id}`)).text();
    expect(page).not.toContain(secret);
    const bad = await web.post("/webhooks", { url: "http://example.com/x", events: [] });
    expect(bad.status).toBe(422);
    const badHtml = await bad.text();
    expect(badHtml).toContain('id="w-events-error"');
    for (let i = 0; i < 10; i++) await web.post(`/webhooks/${hook.id}/test`, { event_type: "webhook.test" });
    const over = await web.post(`/webhooks/${hook.id}/test`, { event_type: "webhook.test" });
    expect(WebClient.flashOf(over)).toContain("Test is limited to 10 per minute per account");
  });

  it("keys: created once with scopes and expiry, listed by prefix, revoked (only by a full session)", async () => {
    const account = await newAccount();
    const web = await signedIn(account.key);
    const res = await web.post("/account/keys", { name: "ci", scopes: ["results:read", "submissions:read"], expires_at: "2099-01-01" });
    expect(res.status).toBe(201);
    const key = /id="new-key" class="secret-value">(alk_[^<]+)</.exec(await res.text())![1]!;
    expect((await json(await call("/api/v1/account", { key }))).key.scopes).toEqual(["results:read", "submissions:read"]);
    const listed = await (await web.request("/account")).text();
    expect(listed).toContain(key.slice(0, 12));
    expect(listed).not.toContain(key);
    expect((await web.post(`/account/keys/${key.slice(0, 12)}/revoke`)).status).toBe(303);
    expect((await call("/api/v1/account", { key })).status).toBe(401);
    const stranger = await newAccount();
    const strangerWeb = await signedIn(stranger.key);
    expect((await strangerWeb.post(`/account/keys/${account.key.slice(0, 12)}/revoke`)).status).toBe(404);
    expect(
      (await admin(`/accounts/${account.id}`).then(json)).keys.find((k: any) => k.prefix === account.key.slice(0, 12)).revoked_at,
    ).toBeNull();
  });
});

describe("error pages", () => {
  it("an unknown page is a 404 page with the request id, never a stack trace; the API keeps its JSON errors", async () => {
    const res = await new WebClient().request("/no/such/page", { headers: { "X-Request-Id": "req-test-123456" } });
    expect(res.status).toBe(404);
    expect(res.headers.get("Content-Type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain("req-test-123456");
    expect(html).not.toMatch(/at .*\.ts:\d+/);
    const api = await call("/api/v1/nothing-here", { key: (await newAccount()).key });
    expect(api.headers.get("Content-Type")).toContain("application/json");
  });
});

describe("parallel fitness from the form", () => {
  it("the form has the field and names each payment's workers; a run on the plan has the plan's cap, with credits the credit cap", async () => {
    const free = await newAccount("free", 0);
    const web = await signedIn(free.key);
    const page = await (await web.request("/submissions/new")).text();
    expect(page).toMatch(/<input[^>]*id="f-parallel_processing"/);
    expect(page).toContain("1 parallel fitness worker,");
    expect(page).toContain("4 parallel fitness workers,");
    expect(await (await web.request("/account")).text()).toMatch(/Parallel fitness workers per run<\/th>\s*<td>1<\/td>\s*<td>4<\/td>/);
    const refused = await web.post("/submissions/new", form({ parallel_processing: '["process", 2]', payment: "plan" }));
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("parallel_processing 2 is over your limit of 1");
    expect(await dbSubmissionCount(free.id)).toBe(0);
    expect((await web.post("/submissions/new", form({ parallel_processing: '["process", 5]', payment: "credits" }))).status).toBe(403);
    const paid = await web.post("/submissions/new", form({ parallel_processing: '["process", 4]', payment: "credits" }));
    expect(paid.status).toBe(303);

    const trial = await newAccount("trial");
    const trialWeb = await signedIn(trial.key);
    const onPlan = await trialWeb.post("/submissions/new", form({ parallel_processing: '["thread", 2]', payment: "plan" }));
    expect(onPlan.status).toBe(303);
    const id = onPlan.headers.get("Location")!.split("/").pop()!;
    expect((await json(await call(`/api/v1/submissions/${id}`, { key: trial.key }))).parameters.parallel_processing).toEqual(["thread", 2]);
    expect((await trialWeb.post("/submissions/new", form({ parallel_processing: "3", payment: "plan" }))).status).toBe(403);
  });
});
