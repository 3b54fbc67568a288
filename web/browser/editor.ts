// The code editor of the new-submission form (CodeMirror 6 with Python highlighting, served from
// /assets): it replaces each code textarea, keeps the textarea's value in step (the form still posts
// the textarea), and suggests the entry symbol from the top-level names of the source. Read-only code
// on other pages is highlighted with the same grammar.
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";

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
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...defaultKeymap, ...historyKeymap]),
        theme,
        EditorView.contentAttributes.of({
          "aria-labelledby": label?.id ?? "",
          "aria-describedby": textarea.getAttribute("aria-describedby") ?? "",
          "aria-multiline": "true",
        }),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          textarea.value = update.state.doc.toString();
          suggest(textarea, textarea.value);
        }),
      ],
    }),
  });
  view.dom.classList.add("editor");
  if (textarea.getAttribute("aria-invalid")) view.dom.classList.add("invalid");
  textarea.after(view.dom);
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
