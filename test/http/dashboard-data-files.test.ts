// Data files in the dashboard (docs/dashboard.md#data-files): the page lists, uploads (a plain form, the
// CSRF token its first field; or the script's upload with X-CSRF-Token and JSON back), downloads and
// deletes; the new-submission form attaches files; the submission page lists them. The CSRF token is
// checked before a byte of the file is stored.
import { describe, expect, it } from "vitest";
import { env, getSubmission, newDataFile, newRoomyAccount } from "../helpers/api";
import { WebClient } from "../helpers/web";

const BOUNDARY = "----alleleTestBoundary7MA4YWxk";
type Part = { name: string; value: string; filename?: string; type?: string };

/** A multipart body of these parts, in this order. */
function multipart(parts: Part[]): string {
  return `${parts
    .map(
      (p) =>
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ""}\r\n${
          p.type ? `Content-Type: ${p.type}\r\n` : ""
        }\r\n${p.value}\r\n`,
    )
    .join("")}--${BOUNDARY}--\r\n`;
}

async function signedIn() {
  const account = await newRoomyAccount();
  const web = new WebClient();
  await web.signInWithKey(account.key);
  return { account, web };
}

const upload = (web: WebClient, parts: Part[], headers: Record<string, string> = {}, path = "/data-files") =>
  web.request(path, {
    method: "POST",
    rawBody: multipart(parts),
    headers: { "Content-Type": `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
  });

async function objectsOf(accountId: string) {
  return (await env.FILES.list({ prefix: `data/${accountId}/` })).objects.length;
}

describe("the data files page", () => {
  it("uploads with the form (the CSRF token first), lists, downloads and deletes", async () => {
    const { account, web } = await signedIn();
    const page = await (await web.request("/data-files")).text();
    expect(page).toContain("No data files yet.");
    expect(page).toContain('enctype="multipart/form-data"');
    const csrf = WebClient.csrfOf(page);
    const res = await upload(web, [
      { name: "_csrf", value: csrf },
      { name: "file", filename: "jobs.csv", type: "text/csv", value: "job,duration\na,3\n" },
    ]);
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/data-files");
    expect(WebClient.flashOf(res)).toBe("Uploaded jobs.csv.");
    const listed = await (await web.request("/data-files")).text();
    expect(listed).toContain("<code>jobs.csv</code>");
    const id = /\/data-files\/([0-9A-Za-z]{12})\/content/.exec(listed)![1]!;
    const download = await web.request(`/data-files/${id}/content`);
    expect(download.status).toBe(200);
    expect(download.headers.get("Content-Disposition")).toContain('filename="jobs.csv"');
    expect(download.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(await download.text()).toBe("job,duration\na,3\n");

    const deleted = await web.post(`/data-files/${id}/delete`);
    expect(deleted.status).toBe(303);
    expect(WebClient.flashOf(deleted)).toContain("Deleted jobs.csv");
    expect(await (await web.request("/data-files")).text()).toContain("No data files yet.");
    expect(await objectsOf(account.id)).toBe(0);
  });

  it("the script's upload: X-CSRF-Token and JSON back, errors as the API's envelope", async () => {
    const { web } = await signedIn();
    const csrf = await web.csrf();
    const res = await upload(web, [{ name: "file", filename: "x.csv", type: "text/csv", value: "1\n" }], {
      "X-CSRF-Token": csrf,
      Accept: "application/json",
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ name: "x.csv", size_bytes: 2, content_type: "text/csv" });
    const bad = await upload(web, [{ name: "file", filename: "../x.csv", value: "1\n" }], {
      "X-CSRF-Token": csrf,
      Accept: "application/json",
    });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_data_file_name");
  });

  it("refuses an upload without the session's token — or with it after the file — storing nothing", async () => {
    const { account, web } = await signedIn();
    const csrf = await web.csrf();
    const file = { name: "file", filename: "x.csv", value: "secret\n" };
    for (const parts of [[file], [{ name: "_csrf", value: "wrong" }, file], [file, { name: "_csrf", value: csrf }]]) {
      const res = await upload(web, parts);
      expect(res.status, JSON.stringify(parts.map((p) => p.name))).toBe(400);
    }
    expect((await upload(web, [file], { "X-CSRF-Token": "wrong", Accept: "application/json" })).status).toBe(400);
    // Another site's page posting the form: refused by its Origin.
    const cross = await upload(web, [{ name: "_csrf", value: csrf }, file], { Origin: "https://evil.example" });
    expect(cross.status).toBe(400);
    expect(await objectsOf(account.id)).toBe(0);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM data_files WHERE account_id = ?").bind(account.id).first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it("a refusal of the file is shown on the page it came from", async () => {
    const { web } = await signedIn();
    const csrf = await web.csrf();
    const res = await upload(web, [
      { name: "_csrf", value: csrf },
      { name: "file", filename: "a/b.csv", value: "1\n" },
    ]);
    expect(res.status).toBe(303);
    expect(WebClient.flashOf(res)).toContain("invalid_data_file_name");
    // A body that is no readable upload at all is the error page's 400 or 415, the token sent or not.
    for (const headers of [{ "X-CSRF-Token": csrf }, {}] as Record<string, string>[]) {
      const broken = await web.request("/data-files", {
        method: "POST",
        rawBody: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n--${BOUNDARY}\r\nbroken`,
        headers: { "Content-Type": `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
      });
      expect(broken.status, JSON.stringify(headers)).toBe(400);
      const noBoundary = await web.request("/data-files", {
        method: "POST",
        rawBody: "x",
        headers: { "Content-Type": "multipart/form-data", ...headers },
      });
      expect(noBoundary.status, JSON.stringify(headers)).toBeGreaterThanOrEqual(400);
      expect(noBoundary.status).toBeLessThan(500);
    }
  });

  it("another account's file is 404 to download and delete", async () => {
    const { web } = await signedIn();
    const other = await newRoomyAccount();
    const theirs = await newDataFile(other.key, "theirs.csv", "t\n");
    expect((await web.request(`/data-files/${theirs.id}/content`)).status).toBe(404);
    expect((await web.post(`/data-files/${theirs.id}/delete`)).status).toBe(404);
    expect((await newDataFile(other.key, "check.csv", "t\n")).sha256).toBe(theirs.sha256);
  });
});

describe("the new-submission form", () => {
  it("offers the account's files as checkboxes; the checked ones become data_files; the submission page lists them", async () => {
    const { account, web } = await signedIn();
    const jobs = await newDataFile(account.key, "jobs.csv", "job,duration\na,3\n");
    const other = await newDataFile(account.key, "other.csv", "o\n");
    const page = await (await web.request("/submissions/new")).text();
    expect(page).toContain(`name="data_files" value="${jobs.id}"`);
    expect(page).toContain(`name="data_files" value="${other.id}"`);
    expect(page).toContain("data-upload-url=");
    const sent = await web.post("/submissions/new", {
      name: "with data",
      num_generations: "5",
      sol_per_pop: "8",
      num_parents_mating: "4",
      num_genes: "3",
      fitness_func: "def fitness(ga, solution, idx):\n    return 0.0\n",
      fitness_func_entry: "fitness",
      data_files: [jobs.id],
    });
    expect(sent.status).toBe(303);
    const id = sent.headers.get("Location")!.split("/").at(-1)!;
    expect((await getSubmission(account.key, id)).parameters.data_files).toEqual([jobs.id]);
    const detail = await (await web.request(`/submissions/${id}`)).text();
    expect(detail).toContain("<code>/data/jobs.csv</code>");
    // A copy of it starts with the same files checked.
    const copy = await (await web.request(`/submissions/new?from=${id}`)).text();
    expect(copy).toMatch(new RegExp(`name="data_files" value="${jobs.id}" checked`));
    expect(copy).not.toMatch(new RegExp(`name="data_files" value="${other.id}" checked`));
  });

  it("an unknown file, or two of one name, are shown at the data files' choice, and nothing is created", async () => {
    const { account, web } = await signedIn();
    const one = await newDataFile(account.key, "jobs.csv", "1\n");
    const two = await newDataFile(account.key, "jobs.csv", "2\n");
    const base = {
      num_generations: "5",
      sol_per_pop: "8",
      num_parents_mating: "4",
      num_genes: "3",
      fitness_func: "def fitness(ga, solution, idx):\n    return 0.0\n",
      fitness_func_entry: "fitness",
    };
    for (const files of [
      [one.id, "nosuchfile01"],
      [one.id, two.id],
    ]) {
      const res = await web.post("/submissions/new", { ...base, data_files: files });
      expect(res.status).toBe(422);
      const html = await res.text();
      expect(html).toContain('id="f-data_files-error"');
      expect(html).toContain('href="#f-data_files"');
    }
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM submissions WHERE account_id = ?").bind(account.id).first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it("the sweep form offers the same checkboxes: the checked files become the base's data_files, read by every child", async () => {
    const { account, web } = await signedIn();
    const jobs = await newDataFile(account.key, "jobs.csv", "job,duration\na,3\n");
    const form = await (await web.request("/sweeps/new")).text();
    expect(form).toContain(`name="data_files" value="${jobs.id}"`);
    const sweepForm = {
      name: "swept with data",
      num_generations: "5",
      sol_per_pop: "8",
      num_parents_mating: "4",
      num_genes: "3",
      fitness_func: "def fitness(ga, solution, idx):\n    return 0.0\n",
      fitness_func_entry: "fitness",
      grid_param_0: "sol_per_pop",
      grid_values_0: "8, 10",
      seeds: "1",
      payment: "plan",
    };
    const refused = await web.post("/sweeps/new", { ...sweepForm, data_files: [jobs.id, "nosuchfile01"] });
    expect(refused.status).toBe(422);
    const html = await refused.text();
    expect(html).toContain('id="f-data_files-error"');
    expect(html).toMatch(new RegExp(`name="data_files" value="${jobs.id}" checked`));
    const sent = await web.post("/sweeps/new", { ...sweepForm, data_files: [jobs.id] });
    expect(sent.status).toBe(303);
    const id = sent.headers.get("Location")!.split("/").at(-1)!;
    const children = await env.DB.prepare("SELECT id, parameters FROM submissions WHERE sweep_id = ?")
      .bind(id)
      .all<{ id: string; parameters: string }>();
    expect(children.results).toHaveLength(2);
    for (const child of children.results) {
      expect(JSON.parse(child.parameters).data_files).toEqual([jobs.id]);
      const detail = await (await web.request(`/submissions/${child.id}`)).text();
      expect(detail).toContain("<code>/data/jobs.csv</code>");
    }
  });
});
