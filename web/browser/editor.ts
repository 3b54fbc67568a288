// The code editor of the new-submission form (CodeMirror 6 with Python highlighting, served from
// /assets): it replaces each code textarea, keeps the textarea's value in step (the form still posts
// the textarea), and suggests the entry symbol from the top-level names of the source. Read-only code
// on other pages is highlighted with the same grammar.
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import {
  bracketMatching,
  defaultHighlightStyle,
  ensureSyntaxTree,
  indentOnInput,
  indentUnit,
  syntaxHighlighting,
} from "@codemirror/language";
import { EditorState, RangeSetBuilder, StateField } from "@codemirror/state";
import { Decoration, type DecorationSet, drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";

/**
 * Where CodeMirror's Python parser (lezer) could not read the source: its error nodes, as [from, to]
 * (at least one character). It catches what the grammar sees — unclosed brackets and strings, a
 * statement that is not Python's (a missing colon, `def` without a name, a stray operator), some
 * indentation errors — not what only Python's compiler or the run finds (names, imports, types, every
 * indentation rule). The run's compile() stays the judge (a run that does not compile is charged 0).
 */
export function syntaxErrors(state: EditorState): [number, number][] {
  const tree = ensureSyntaxTree(state, state.doc.length, 200);
  const found: [number, number][] = [];
  tree?.iterate({
    enter: (node) => {
      if (!node.type.isError) return;
      const from = Math.min(node.from, Math.max(0, state.doc.length - 1));
      found.push([from, Math.max(node.to, from + 1)]);
    },
  });
  return found;
}

// The line where the parser stopped is marked (an error node is often empty, at a line's end).
const errorLine = Decoration.line({ class: "cm-syntax-error", attributes: { title: "Python cannot parse this line" } });

function errorDecorations(state: EditorState, errors: [number, number][]): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  let last = -1;
  for (const [from] of errors) {
    const line = state.doc.lineAt(Math.min(from, state.doc.length));
    if (line.from <= last) continue;
    builder.add(line.from, line.from, errorLine);
    last = line.from;
  }
  return builder.finish();
}

/** The parser's errors of the current source and their marks, recomputed when the source changes. */
const syntaxField = StateField.define<{ errors: [number, number][]; marks: DecorationSet }>({
  create: (state) => {
    const errors = syntaxErrors(state);
    return { errors, marks: errorDecorations(state, errors) };
  },
  update: (value, tr) => {
    if (!tr.docChanged) return value;
    const errors = syntaxErrors(tr.state);
    return { errors, marks: errorDecorations(tr.state, errors) };
  },
  provide: (field) => EditorView.decorations.from(field, (value) => value.marks),
});

/** The message under an editor: where the parser stopped, in words, or nothing. */
function showErrors(note: HTMLElement, state: EditorState, errors: [number, number][]) {
  if (!errors.length) {
    note.textContent = "";
    note.hidden = true;
    return;
  }
  const lines = [...new Set(errors.map(([from]) => state.doc.lineAt(from).number))];
  note.hidden = false;
  note.textContent = `Syntax error on line${lines.length === 1 ? "" : "s"} ${lines.slice(0, 5).join(", ")}: Python cannot parse this (checked as you type: brackets, strings and statement syntax — not names, imports or what happens when it runs).`;
}

/** Top-level names a Python source defines: functions and classes first, then assignments (the server's rule). */
export function topLevelNames(source: string): { functions: string[]; assigned: string[] } {
  const functions: string[] = [];
  const assigned: string[] = [];
  for (const line of source.split(/\r?\n/)) {
    const def = /^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/.exec(line) ?? /^class\s+([A-Za-z_]\w*)\s*[(:]/.exec(line);
    if (def) functions.push(def[1]!);
    const assign = /^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)/.exec(line);
    if (assign) assigned.push(assign[1]!);
  }
  return { functions, assigned };
}

function suggest(textarea: HTMLTextAreaElement, source: string) {
  const entry = document.getElementById(textarea.dataset.entry ?? "") as HTMLInputElement | null;
  if (!entry) return;
  const { functions, assigned } = topLevelNames(source);
  // gene_constraint names a list; every other code field a function.
  const names = textarea.name === "gene_constraint" ? [...assigned, ...functions] : [...functions, ...assigned];
  const list = document.getElementById(`${entry.id}-names`);
  if (list) list.replaceChildren(...[...new Set(names)].map((n) => Object.assign(document.createElement("option"), { value: n })));
  // The suggestion fills the field while the person has not typed a name of their own (an initial value
  // that the code defines counts as a suggestion).
  if (entry.dataset.suggested === undefined && names.includes(entry.value)) entry.dataset.suggested = entry.value;
  if ((entry.value === "" || entry.dataset.suggested === entry.value) && names[0]) {
    entry.value = names[0];
    entry.dataset.suggested = names[0];
  }
}

const theme = EditorView.theme({
  "&": { fontSize: "14px" },
  ".cm-content": { fontFamily: "var(--mono)" },
  ".cm-gutters": { background: "var(--code-gutter)" },
});

for (const textarea of document.querySelectorAll<HTMLTextAreaElement>("textarea[data-editor=python]")) {
  const label = document.querySelector(`label[for="${textarea.id}"]`);
  if (label && !label.id) label.id = `${textarea.id}-label`;
  const note = Object.assign(document.createElement("p"), { className: "syntax-errors", id: `${textarea.id}-syntax`, hidden: true });
  note.setAttribute("role", "status");
  const check = (state: EditorState) => showErrors(note, state, state.field(syntaxField).errors);
  const view = new EditorView({
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        python(),
        indentUnit.of("    "), // Python's four spaces, as the template
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...defaultKeymap, ...historyKeymap]),
        theme,
        syntaxField,
        EditorView.contentAttributes.of({
          "aria-labelledby": label?.id ?? "",
          "aria-describedby": [textarea.getAttribute("aria-describedby"), note.id].filter(Boolean).join(" "),
          "aria-multiline": "true",
        }),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          textarea.value = update.state.doc.toString();
          suggest(textarea, textarea.value);
          check(update.state);
        }),
      ],
    }),
  });
  view.dom.classList.add("editor");
  if (textarea.getAttribute("aria-invalid")) view.dom.classList.add("invalid");
  textarea.after(view.dom);
  view.dom.after(note);
  check(view.state);
  textarea.hidden = true;
  textarea.dataset.mounted = "true";
  label?.addEventListener("click", () => view.focus());
  suggest(textarea, textarea.value);
}

// Read-only code, highlighted.
for (const pre of document.querySelectorAll<HTMLElement>("pre[data-highlight=python]")) {
  const view = new EditorView({
    state: EditorState.create({
      doc: pre.textContent ?? "",
      extensions: [
        lineNumbers(),
        python(),
        syntaxHighlighting(defaultHighlightStyle),
        EditorState.readOnly.of(true),
        EditorView.editable.of(false),
        theme,
      ],
    }),
  });
  view.dom.classList.add("editor", "readonly");
  view.dom.setAttribute("aria-label", pre.getAttribute("aria-label") ?? "code");
  pre.replaceWith(view.dom);
}
