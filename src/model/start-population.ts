// A start population given at creation (`initial_population`, docs/api.md#creation-parameters), checked as
// PyGAD's constructor checks it and for what a run could not report: its shape against sol_per_pop and
// num_genes, and each value against its gene's type — an integer type truncates it and must hold it
// (PyGAD refuses it otherwise), float16/float32 must hold it without turning it into an infinity.
import type { GaParameters } from "./parameters";

/** The values an integer type of numpy holds (`int` is Python's, stored as int64 by PyGAD). */
const INT_RANGES: Record<string, [number, number]> = {
  int: [-(2 ** 63), 2 ** 63 - 1],
  int8: [-128, 127],
  int16: [-32768, 32767],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
  uint8: [0, 255],
  uint16: [0, 65535],
  uint32: [0, 2 ** 32 - 1],
  uint64: [0, 2 ** 64 - 1],
};
/** The largest finite value of the narrow float types (past it numpy makes an infinity). */
const FLOAT_MAX: Record<string, number> = { float16: 65504, float32: 3.4028234663852886e38 };

type Shape = Pick<GaParameters, "sol_per_pop" | "num_genes" | "gene_type">;

/** The type name of gene `i` under `geneType` (a name, a [name, precision] pair, or one of them per gene). */
function typeOf(geneType: Shape["gene_type"], i: number): string {
  const name = (t: unknown): string => (typeof t === "string" ? t : Array.isArray(t) && typeof t[0] === "string" ? t[0] : "float");
  if (geneType === undefined || typeof geneType === "string") return name(geneType);
  const isPair = geneType.length === 2 && typeof geneType[0] === "string" && !Array.isArray(geneType[1]) && typeof geneType[1] !== "string";
  return name(isPair ? geneType : geneType[i]);
}

/** Why PyGAD (or a run's report) would refuse `rows` as the start population of a job with `p`; [] when it is fine. */
export function populationProblems(rows: number[][], p: Shape): string[] {
  const problems: string[] = [];
  if (rows.length !== p.sol_per_pop)
    problems.push(`has ${rows.length} solutions (rows) but sol_per_pop is ${p.sol_per_pop}: one row per solution`);
  const short = rows.findIndex((row) => row.length !== p.num_genes);
  if (short >= 0) {
    problems.push(`row ${short} has ${rows[short]!.length} values but num_genes is ${p.num_genes}: one value per gene`);
    return problems;
  }
  for (const [r, row] of rows.entries()) {
    for (const [g, value] of row.entries()) {
      const type = typeOf(p.gene_type, g);
      const range = INT_RANGES[type];
      if (range && (Math.trunc(value) < range[0] || Math.trunc(value) > range[1])) {
        problems.push(`row ${r}, gene ${g}: ${value} does not fit gene type ${type} (${range[0]}..${range[1]} after truncation)`);
        return problems;
      }
      const max = FLOAT_MAX[type];
      if (max !== undefined && Math.abs(value) > max) {
        problems.push(`row ${r}, gene ${g}: ${value} is beyond gene type ${type} (±${max}); it would become infinite`);
        return problems;
      }
    }
  }
  return problems;
}
