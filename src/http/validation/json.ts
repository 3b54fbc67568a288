// A JSON body as the API reads it (docs/api.md#errors): `400 malformed_json` for text that is not JSON,
// and `400 non_finite_number` naming where for a number JSON cannot carry — the `NaN`, `Infinity` and
// `-Infinity` Python's json.dumps writes by default (a GA's parameters holding float('nan')), and a
// number so large it is Infinity as a double (`1e400`). JSON.parse refuses the first and silently turns
// the second into Infinity, which a schema that takes any JSON value would then store as null.
import { ApiError } from "../../errors";

/** A JSON value's place as a JSONPath: `$.gene_space[3]`, `$["odd key"]`. */
type Step = { array: true; index: number } | { array: false; key: string };

const pathOf = (steps: readonly Step[]) =>
  `$${steps.map((s) => (s.array ? `[${s.index}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(s.key) ? `.${s.key}` : `[${JSON.stringify(s.key)}]`)).join("")}`;

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
/** A scalar where a value starts: a number (Python's non-finite words among them), or a literal. */
const SCALAR = /-?Infinity|NaN|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/**
 * Where the first non-finite number of `text` is, read as JSON plus Python's `NaN`, `Infinity` and
 * `-Infinity`: its path and the number as written; null when there is none, or when the text is not
 * JSON even with those words (then it is malformed JSON). Iterative, so no nesting depth overflows a
 * stack; linear in the text's length.
 */
export function nonFiniteLiteral(text: string): { path: string; literal: string } | null {
  let i = 0;
  let found: { path: string; literal: string } | null = null;
  const steps: Step[] = [];
  const skip = () => {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++;
  };
  const string = (): string | null => {
    if (text[i] !== '"') return null;
    let out = "";
    for (i++; i < text.length; ) {
      const ch = text[i]!;
      if (ch === '"') {
        i++;
        return out;
      }
      if (ch === "\\") {
        const escaped = text[i + 1] ?? "";
        if (escaped === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) return null;
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 6;
        } else {
          if (!(escaped in ESCAPES)) return null;
          out += ESCAPES[escaped];
          i += 2;
        }
        continue;
      }
      if (ch < " ") return null;
      out += ch;
      i++;
    }
    return null;
  };
  /** A member's key and its colon; false when they are not there. */
  const member = (): boolean => {
    const key = string();
    if (key === null) return false;
    skip();
    if (text[i] !== ":") return false;
    i++;
    steps.push({ array: false, key });
    return true;
  };
  for (;;) {
    // A value starts here.
    skip();
    const ch = text[i];
    if (ch === "{" || ch === "[") {
      i++;
      skip();
      if (text[i] === (ch === "{" ? "}" : "]")) i++;
      else if (ch === "[") {
        steps.push({ array: true, index: 0 });
        continue;
      } else if (member()) continue;
      else return null;
    } else if (ch === '"') {
      if (string() === null) return null;
    } else {
      SCALAR.lastIndex = i;
      const token = SCALAR.exec(text)?.[0];
      if (!token) return null;
      if (!found && !Number.isFinite(Number(token)) && token !== "true" && token !== "false" && token !== "null") {
        found = { path: pathOf(steps), literal: token };
      }
      i += token.length;
    }
    // A value ended: the next item of its container, or the container's end (and so on outwards).
    for (;;) {
      skip();
      const top = steps.at(-1);
      if (!top) return i === text.length ? found : null;
      if (text[i] === ",") {
        i++;
        skip();
        if (top.array) top.index++;
        else {
          steps.pop();
          if (!member()) return null;
        }
        break;
      }
      if (text[i] === (top.array ? "]" : "}")) {
        i++;
        steps.pop();
        continue;
      }
      return null;
    }
  }
}

/** Only text with an exponent of three digits or a run of 309 digits can hold a number beyond a double. */
const MAY_OVERFLOW = /[eE]\+?0*[1-9]\d{2}|\d{309}/;

/** The first non-finite number in a parsed value (a literal that overflowed) and its path, or null. */
export function nonFiniteValue(value: unknown): { path: string; value: number } | null {
  const pending: [unknown, Step[]][] = [[value, []]];
  while (pending.length) {
    const [item, steps] = pending.pop()!;
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return { path: pathOf(steps), value: item };
    } else if (Array.isArray(item)) {
      for (let k = item.length - 1; k >= 0; k--) pending.push([item[k], [...steps, { array: true, index: k }]]);
    } else if (item && typeof item === "object") {
      const entries = Object.entries(item);
      for (let k = entries.length - 1; k >= 0; k--) pending.push([entries[k]![1], [...steps, { array: false, key: entries[k]![0] }]]);
    }
  }
  return null;
}

const nonFinite = (path: string, literal: string) =>
  new ApiError(
    "non_finite_number",
    `${path}: ${literal} is not a finite number; JSON has no NaN or Infinity (Python's json.dumps writes them for float('nan') and float('inf')): send finite numbers.`,
    { path, value: literal },
  );

/** The body's text parsed as JSON, or 400 `malformed_json` / `non_finite_number` (with `details.path`). */
export function parseJsonBody(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const found = nonFiniteLiteral(text);
    if (found) throw nonFinite(found.path, found.literal);
    throw new ApiError("malformed_json", "The request body is not valid JSON.");
  }
  if (MAY_OVERFLOW.test(text)) {
    const found = nonFiniteValue(value);
    if (found) {
      // The number as written when the text's first non-finite number is that one (a repeated key may hide it).
      const written = nonFiniteLiteral(text);
      throw nonFinite(found.path, written?.path === found.path ? written.literal : String(found.value));
    }
  }
  return value;
}
