// `npm test` step (and `node scripts/check-imports.mjs`): the import graph of src/ runs one way.
// Every import counts — `import type`, `export … from` and dynamic `import()` included. Fails on any
// cycle, on any import from a lower layer to a higher one (the order is docs/architecture.md's), and on
// any import between the adapters (the API, the dashboard, the consumers), which stand side by side.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "./lib.mjs";

/**
 * Layers from the top down; a file belongs to the first pattern that matches its path under src/.
 * A file may import files of its own layer (no cycle) or of any layer below it, never above. In a layer
 * marked `apart`, each pattern is a wing of its own: its files import nothing of the layer's other wings
 * (the adapters stand side by side on what is below them). A wing may have its own floors (`inside`, top
 * down, paths under the wing): the same rules hold between them, and the folders of one floor stand apart.
 */
export const LAYERS = [
  ["entry", ["index.ts"]],
  ["composition", ["app.ts"]],
  [
    "adapters: the HTTP API, the dashboard, the queue consumers and the cron",
    ["http/", "dashboard/", "queues/"],
    {
      apart: true,
      // The dashboard inside: its app, then one folder per area (side by side), then what they share.
      inside: {
        "dashboard/": [
          ["index.tsx"],
          ["auth/", "device/", "submissions/", "results/", "data-files/", "webhooks/", "account/"],
          ["shared/"],
        ],
      },
    },
  ],
  ["surface: what every request carries, who calls, the scope check", ["surface/"]],
  ["operations both adapters call, and their lists", ["operations/"]],
  ["webhook delivery and tools", ["webhooks/"]],
  ["domain", ["domain/"]],
  ["event outbox", ["events/"]],
  ["admission", ["admission/"]],
  ["leaves: Durable Objects and the runner", ["do/", "runner/"]],
  ["billing", ["billing/"]],
  ["storage", ["storage/"]],
  ["model: the GA parameters and the words every layer shares", ["model/"]],
  ["ground: configuration, environment, errors, ids and crypto", ["config.ts", "env.ts", "errors.ts", "lib/"]],
];

const SRC = join(ROOT, "src");
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']/g;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

function resolveImport(from, spec) {
  if (!spec.startsWith(".")) return null; // a package
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx")]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next form
    }
  }
  throw new Error(`${relative(ROOT, from)}: cannot resolve import "${spec}"`);
}

const matches = (rel, p) => (p.endsWith("/") ? rel.startsWith(p) : rel === p);

export function layerOf(path) {
  const rel = relative(SRC, path);
  const index = LAYERS.findIndex(([, patterns]) => patterns.some((p) => matches(rel, p)));
  if (index < 0) throw new Error(`src/${rel} belongs to no layer: add it to LAYERS in scripts/check-imports.mjs and docs/architecture.md`);
  return index;
}

/** The wing of a file in a layer marked `apart` (its pattern), or null. */
function wingOf(path) {
  const [, patterns, options] = LAYERS[layerOf(path)];
  return options?.apart ? patterns.find((p) => matches(relative(SRC, path), p)) : null;
}

/** Within a wing that has floors (`inside`): the file's floor (0 at the top) and its folder there. */
function floorOf(path) {
  const wing = wingOf(path);
  const floors = wing && LAYERS[layerOf(path)][2]?.inside?.[wing];
  if (!floors) return null;
  const rel = relative(SRC, path).slice(wing.length);
  const floor = floors.findIndex((patterns) => patterns.some((p) => matches(rel, p)));
  if (floor < 0) throw new Error(`src/${wing}${rel} is on no floor of ${wing}: add it to LAYERS in scripts/check-imports.mjs`);
  return { floor, folder: floors[floor].find((p) => matches(rel, p)) };
}

export function importGraph(root = SRC) {
  const graph = new Map();
  for (const file of files(root)) {
    const text = readFileSync(file, "utf8");
    const targets = new Set();
    for (const m of text.matchAll(IMPORT)) {
      const target = resolveImport(file, m[1] ?? m[2] ?? m[3]);
      if (target) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

export function problems(graph) {
  const found = [];
  const name = (p) => `src/${relative(SRC, p)}`;
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (layerOf(target) < layerOf(file)) {
        found.push(`upward import: ${name(file)} (${LAYERS[layerOf(file)][0]}) -> ${name(target)} (${LAYERS[layerOf(target)][0]})`);
      } else if (layerOf(target) === layerOf(file) && wingOf(file) !== wingOf(target)) {
        found.push(
          `sideways import: ${name(file)} (${wingOf(file)}) -> ${name(target)} (${wingOf(target)}), two wings of "${LAYERS[layerOf(file)][0]}"`,
        );
      } else if (layerOf(target) === layerOf(file) && floorOf(file)) {
        const [from, to] = [floorOf(file), floorOf(target)];
        if (to.floor < from.floor) found.push(`upward import inside ${wingOf(file)}: ${name(file)} -> ${name(target)}`);
        else if (to.floor === from.floor && to.folder !== from.folder && from.folder.endsWith("/"))
          found.push(`sideways import inside ${wingOf(file)}: ${name(file)} (${from.folder}) -> ${name(target)} (${to.folder})`);
      }
    }
  }
  // Cycles: depth-first search, reporting each cycle once by its path.
  const state = new Map();
  const stack = [];
  const visit = (file) => {
    state.set(file, "open");
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === "open") found.push(`cycle: ${[...stack.slice(stack.indexOf(target)), target].map(name).join(" -> ")}`);
      else if (!state.has(target)) visit(target);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const graph = importGraph();
  const found = problems(graph);
  const edges = [...graph.values()].reduce((n, t) => n + t.size, 0);
  if (found.length) {
    console.error(found.join("\n"));
    console.error(`\n${found.length} problem(s) in the import graph of src/ (${graph.size} files, ${edges} imports)`);
    process.exit(1);
  }
  console.log(`import graph of src/: ${graph.size} files, ${edges} imports, no cycle, no upward or sideways import`);
}
