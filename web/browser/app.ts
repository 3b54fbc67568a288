// The dashboard's one small script (pages work without it): charts, the live progress of a running
// submission, copy buttons, confirmations, local times.
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
      if (chart && live.points !== points) {
        points = live.points;
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

/** Timestamps in the reader's own time zone (the page says UTC without the script). */
function initTimes() {
  for (const el of document.querySelectorAll<HTMLTimeElement>("time[datetime]")) {
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

initCanonical();
initTimes();
initCharts();
initLive();
initCompare();
initSweepForm();
initSweepLive();
initCopy();
initConfirm();
