// Picking runs to compare, the sweep form's count of children, and a sweep's live counts
// (docs/dashboard.md#compare, #sweeps). The pages work without it: the server refuses what the script
// would have (more than 12 runs, more children than the cap) with the same words.

/** The compare form's bar: how many runs are ticked, and no sending past the cap or with none. */
export function initCompare() {
  const form = document.querySelector<HTMLFormElement>("form[data-compare-max]");
  if (!form) return;
  const max = Number(form.dataset.compareMax);
  const count = form.querySelector<HTMLElement>("[data-compare-count]");
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  const boxes = () => [...document.querySelectorAll<HTMLInputElement>(`input[type=checkbox][form="${form.id}"]`)];
  const update = () => {
    const n = boxes().filter((b) => b.checked).length;
    const over = n > max;
    form.classList.toggle("over", over);
    if (button) button.disabled = n === 0 || over;
    if (count)
      count.textContent =
        n === 0
          ? `Tick up to ${max} runs in the table.`
          : over
            ? `${n} runs ticked: at most ${max} can be compared at once.`
            : `${n} run${n === 1 ? "" : "s"} ticked.`;
  };
  document.addEventListener("change", (event) => {
    if ((event.target as HTMLElement).matches?.(`input[type=checkbox][form="${form.id}"]`)) update();
  });
  update();
}

/** How many values a grid row's text holds (as the server reads it: JSON list, else comma-separated). */
function valueCount(text: string): number {
  const t = text.trim();
  if (!t) return 0;
  if (t.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(t);
      return Array.isArray(parsed) ? parsed.length : 0;
    } catch {
      return 0;
    }
  }
  return t.split(",").filter((s) => s.trim()).length;
}

/** The sweep form: combinations × seeds as you type, against the cap of how it is paid; no sending past it. */
export function initSweepForm() {
  const form = document.querySelector<HTMLFormElement>("form.sweep-form");
  const line = document.querySelector<HTMLElement>("[data-cap-plan]");
  if (!form || !line) return;
  const out = line.querySelector<HTMLElement>("[data-children]")!;
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  const update = () => {
    let combinations = 1;
    let rows = 0;
    for (const input of form.querySelectorAll<HTMLInputElement>("[data-grid-values]")) {
      const select = input.closest("tr")?.querySelector<HTMLSelectElement>("select");
      if (!select?.value) continue;
      rows++;
      combinations *= valueCount(input.value);
    }
    const seeds = Number(form.querySelector<HTMLInputElement>("[data-seeds]")?.value ?? "");
    const paid = form.querySelector<HTMLInputElement>("input[name=payment]:checked")?.value === "credits" ? "credits" : "plan";
    const cap = Number(line.dataset[paid === "credits" ? "capCredits" : "capPlan"]);
    if (rows === 0 || !Number.isInteger(seeds) || seeds < 1) {
      out.textContent = rows === 0 ? "pick a parameter to vary" : "give a number of seeds";
      line.classList.remove("over");
      return;
    }
    const children = combinations * seeds;
    const over = children > cap;
    out.textContent = `${combinations} combination${combinations === 1 ? "" : "s"} × ${seeds} seed${seeds === 1 ? "" : "s"} = ${children}${over ? `, more than your ${cap}` : ""}`;
    line.classList.toggle("over", over);
    if (button) button.disabled = over;
  };
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  update();
}

/** A running sweep's page: its children's counts every 2 s; the page reloads once the sweep has ended. */
export function initSweepLive() {
  const box = document.querySelector<HTMLElement>("[data-sweep-live]");
  const url = box?.dataset.sweepLive;
  if (!box || !url) return;
  const tick = async () => {
    try {
      const res = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!res.ok) throw new Error(String(res.status));
      const live = (await res.json()) as { status: string; counts: Record<string, number> };
      for (const [key, value] of Object.entries(live.counts)) {
        const el = box.querySelector<HTMLElement>(`[data-count="${key}"]`);
        if (el && el.textContent !== String(value)) el.textContent = String(value);
      }
      box.dataset.polls = String(Number(box.dataset.polls ?? "0") + 1);
      if (live.status !== "running") {
        window.location.reload();
        return;
      }
    } catch {
      // a missed poll is retried at the next tick
    }
    setTimeout(tick, 2000);
  };
  setTimeout(tick, 1000);
}
