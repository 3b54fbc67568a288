// A gene_type as the Vilvik SDK serialises a pygad.GA's (vilvik._extract.extract_ga_parameters): a
// single type as its name (`float`, `numpy.float32`), anything else as `gene_type: "custom"` with a
// Python expression in `custom_gene_type` — `[float, 2]` (a type and its precision), `[int, float,
// numpy.float32]` (one type per gene), `[[float, 2], int]` (per gene, with pairs). Read here into the
// gene_type the API takes (docs/api.md#creation-parameters): `["float", 2]`, `["int", "float", "float32"]`.
import type { Json } from "./json";

/** numpy's fixed-size types by name, and Python's int and float (what PyGAD's gene_type accepts). */
const TYPE_NAMES = new Set([
  "int",
  "float",
  "int8",
  "int16",
  "int32",
  "int64",
  "uint8",
  "uint16",
  "uint32",
  "uint64",
  "float16",
  "float32",
  "float64",
]);

/** A type's name as the API takes it: `int`, `float`, or numpy's name without `numpy.` (`numpy.float32` → `float32`). */
export function typeName(text: string): string | null {
  const name = text.startsWith("numpy.") ? text.slice("numpy.".length) : text;
  if (!TYPE_NAMES.has(name)) return null;
  return text.startsWith("numpy.") && (name === "int" || name === "float") ? null : name;
}

type Parsed = { value: Json } | { error: string };

/**
 * `custom_gene_type` read into an API gene_type, or why it cannot be: the SDK's expression is a type name,
 * an integer (a precision), `None`, or a bracketed list of them.
 */
export function parseGeneTypeExpression(expression: string): Parsed {
  const tokens = expression.match(/\[|\]|,|[^\s[\],]+/g) ?? [];
  let at = 0;
  const item = (): Json => {
    const token = tokens[at++];
    if (token === undefined) throw new Error("ends too early");
    if (token === "[") {
      const list: Json[] = [];
      if (tokens[at] === "]") throw new Error("has an empty list");
      for (;;) {
        list.push(item());
        const next = tokens[at++];
        if (next === "]") return list;
        if (next !== ",") throw new Error(next === undefined ? "has a list without its ]" : `has "${next}" where , or ] was expected`);
      }
    }
    if (token === "None") return null;
    if (/^[-+]?\d+$/.test(token)) return Number(token);
    const name = typeName(token);
    if (name === null)
      throw new Error(`names "${token}", which is not a gene type (int, float or numpy's int8 … uint64, float16 … float64)`);
    return name;
  };
  try {
    const value = item();
    if (at !== tokens.length) throw new Error(`has "${tokens[at]}" after its end`);
    return { value: normalise(value) };
  } catch (err) {
    return { error: `${JSON.stringify(expression.slice(0, 200))} ${(err as Error).message}` };
  }
}

/** `[type, null]` is the type alone (PyGAD's form of a type without precision), at the top and per gene. */
function normalise(value: Json): Json {
  if (!Array.isArray(value)) return value;
  if (value.length === 2 && typeof value[0] === "string" && value[1] === null) return value[0];
  if (value.length === 2 && typeof value[0] === "string" && typeof value[1] === "number") return value;
  return value.map(normalise);
}
