// The dashboard's one small script (pages work without it): charts, the live progress of a running
// submission, copy buttons, confirmations, local times, and the new-submission form's "Upload and attach"
// of a data file.
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { drawChart, type LiveChart, type Panel } from "./chart";
import { drawFront, type Front } from "./front";
import { initCompare, initSweepForm, initSweepLive } from "./sweeps";

const charts = new Map<string, LiveChart>();

const embedded = <T>(id: string): T | null => {
  const text = document.getElementById(id)?.textContent;
  return text ? (JSON.parse(text) as T) : null;
};

function initCharts() {
  for (const el of document.querySelectorAll<HTMLElement>("[data-chart]")) {
    const id = el.dataset.chart!;
    charts.set(id, drawChart(el, embedded<{ panels?: Panel[] }>(id)?.panels ?? []));
  }
  for (const el of document.querySelectorAll<HTMLElement>("[data-front]")) {
    const front = embedded<Front>(el.dataset.front!);
    if (front) drawFront(el, front);
  }
}

interface Live {
  status: string;
  run_id: string;
  generations_completed: number | null;
  num_generations: number | null;
  best_solution_fitness: number | null;
  /** The best value of each objective at the latest report (several objectives), else null. */
  best_objectives: number[] | null;
  /** How many points the run's progress trail has (a new one: redraw). */
  points: number;
  /** The trail as the chart draws it (one panel per objective). */
  panels: Panel[];
  error: { code: string; message: string } | null;
}

const fmt = (n: number | null) =>
  n === null
    ? "—"
    : Math.abs(n) !== 0 && (Math.abs(n) < 1e-4 || Math.abs(n) >= 1e9)
      ? n.toExponential(4)
      : String(Number(n.toPrecision(6)));

/** Polls the live panel's URL while the run is queued or running; reloads the page once it has ended. */
function initLive() {
  const panel = document.querySelector<HTMLElement>("[data-live]");
  if (!panel) return;
  const url = panel.dataset.live!;
  const chart = charts.get(panel.dataset.liveChart ?? "");
  const set = (name: string, text: string) => {
    const el = panel.querySelector<HTMLElement>(`[data-field="${name}"]`);
    if (el && el.textContent !== text) el.textContent = text;
  };
  let points = 0;
  let drawnAt: number | null = null;
  const tick = async () => {
    try {
      const res = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!res.ok) throw new Error(String(res.status));
      const live = (await res.json()) as Live;
      set("status", live.status);
      const badge = document.querySelector<HTMLElement>("[data-live-badge]");
      if (badge && badge.textContent !== live.status) {
        badge.textContent = live.status;
        badge.className = `status s-${live.status}`;
      }
      set("generations", String(live.generations_completed ?? 0));
      set("total", String(live.num_generations ?? "?"));
      set("fitness-label", live.best_objectives ? "best objectives" : "best fitness");
      set("fitness", live.best_objectives ? live.best_objectives.map(fmt).join(", ") : fmt(live.best_solution_fitness));
      const bar = panel.querySelector<HTMLProgressElement>("progress");
      if (bar) {
        bar.max = live.num_generations ?? 1;
        bar.value = live.generations_completed ?? 0;
      }
      // A bounded trail can keep its length while it moves on (docs/dashboard.md#live-progress): the generation says so.
      if (chart && (live.points !== points || live.generations_completed !== drawnAt)) {
        points = live.points;
        drawnAt = live.generations_completed;
        chart.setPanels(live.panels);
      }
      panel.dataset.points = String(points);
      if (live.status !== "queued" && live.status !== "running") {
        window.location.reload();
        return;
      }
    } catch {
      // a missed poll is retried at the next tick
    }
    setTimeout(tick, 1000);
  };
  setTimeout(tick, 500);
}

function initCopy() {
  document.addEventListener("click", async (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>("button[data-copy], button[data-copy-from]");
    if (!button) return;
    const text = button.dataset.copy ?? document.getElementById(button.dataset.copyFrom!)?.textContent?.trim() ?? "";
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      // No clipboard (an insecure context): select the text so Ctrl+C copies it.
      const target = button.dataset.copyFrom ? document.getElementById(button.dataset.copyFrom) : null;
      if (target) window.getSelection()?.selectAllChildren(target);
      button.textContent = "Press Ctrl+C";
    }
  });
}

function initConfirm() {
  document.addEventListener("submit", (event) => {
    const form = event.target as HTMLFormElement;
    const question = form.dataset.confirm;
    if (question && !window.confirm(question)) event.preventDefault();
  });
}

/**
 * Parts of a page that change while something in them is pending (a queued or running run, a delivery
 * not yet delivered): each `[data-refresh]` element (with an id) that says `data-pending` is fetched again
 * with its page every 2 s and replaced by its new version, until no such part is pending any more. One
 * request per tick for the whole page, only while something is pending.
 */
function initRefresh() {
  const pending = () => document.querySelectorAll<HTMLElement>("[data-refresh][data-pending]").length > 0;
  if (!pending()) return;
  const tick = async () => {
    try {
      const res = await fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" });
      if (res.ok) {
        const next = new DOMParser().parseFromString(await res.text(), "text/html");
        for (const el of document.querySelectorAll<HTMLElement>("[data-refresh]")) {
          const fresh = next.getElementById(el.id);
          if (!fresh || fresh.outerHTML === el.outerHTML) continue;
          const node = document.importNode(fresh, true);
          // Ticked boxes (runs picked to compare) stay ticked.
          for (const box of el.querySelectorAll<HTMLInputElement>("input[type=checkbox]:checked")) {
            const same = node.querySelector<HTMLInputElement>(`input[type=checkbox][name="${box.name}"][value="${box.value}"]`);
            if (same) same.checked = true;
          }
          el.replaceWith(node);
          initTimes(node);
        }
      }
    } catch {
      // a missed refresh is tried again at the next tick
    }
    if (pending()) setTimeout(tick, 2000);
  };
  setTimeout(tick, 2000);
}

/** Timestamps in the reader's own time zone (the page says UTC without the script). */
function initTimes(root: ParentNode = document) {
  for (const el of root.querySelectorAll<HTMLTimeElement>("time[datetime]")) {
    const d = new Date(el.dateTime);
    if (!Number.isNaN(d.getTime())) {
      el.title = el.dateTime;
      el.textContent = d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
    }
  }
}

/** A page rendered by a POST (a secret shown once) gets its own address, so a reload does not post again. */
function initCanonical() {
  const canonical = document.querySelector<HTMLElement>("[data-canonical]")?.dataset.canonical;
  if (canonical && window.location.pathname !== canonical) history.replaceState(null, "", canonical);
}

/**
 * The new-submission form's "Upload and attach": the chosen file goes to /data-files (the session's CSRF
 * token in `X-CSRF-Token`, JSON back), then joins the form's data files, checked. Without the script the
 * control stays hidden and the Data files page uploads.
 */
function initDataFileUpload() {
  const box = document.querySelector<HTMLElement>("[data-upload-url]");
  const list = document.querySelector<HTMLElement>("[data-file-list]");
  if (!box || !list) return;
  const input = box.querySelector<HTMLInputElement>("input[type=file]")!;
  const status = box.querySelector<HTMLElement>("[data-upload-status]")!;
  box.hidden = false;
  input.addEventListener("change", async () => {
    const file = input.files?.[0];
    if (!file) return;
    status.textContent = `Uploading ${file.name}…`;
    const form = new FormData();
    form.append("file", file, file.name);
    try {
      const res = await fetch(box.dataset.uploadUrl!, {
        method: "POST",
        body: form,
        credentials: "same-origin",
        headers: { Accept: "application/json", "X-CSRF-Token": box.dataset.csrf ?? "" },
      });
      const body = (await res.json()) as { id?: string; name?: string; size_bytes?: number; error?: { message?: string } };
      if (!res.ok || !body.id) {
        status.textContent = body.error?.message ?? `The upload failed (HTTP ${res.status}).`;
        return;
      }
      const item = document.createElement("li");
      const label = document.createElement("label");
      const box_ = document.createElement("input");
      box_.type = "checkbox";
      box_.name = "data_files";
      box_.value = body.id;
      box_.checked = true;
      const name = document.createElement("code");
      name.textContent = body.name ?? file.name;
      label.append(box_, " ", name);
      item.append(label);
      list.prepend(item);
      document.querySelector("[data-file-empty]")?.remove();
      status.textContent = `Uploaded and attached ${body.name ?? file.name}.`;
      input.value = "";
    } catch {
      status.textContent = "The upload failed; try again.";
    }
  });
}

initCanonical();
initTimes();
initCharts();
initLive();
initCompare();
initSweepForm();
initSweepLive();
initCopy();
initConfirm();
initDataFileUpload();
initRefresh();
