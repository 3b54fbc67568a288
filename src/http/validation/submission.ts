// The overrides of reexecute and continue (docs/api.md#reexecute), built on the GA parameter model
// (src/model/parameters.ts). The body of POST /submissions is the create operation's (operations/submissions.ts).
import { z } from "zod";
import { gaShape } from "../../model/parameters";
import { refusedLogger } from "../../operations/submissions";

/**
 * Overrides accepted by reexecute (any GA parameter) and continue (not num_genes, gene_type, sol_per_pop).
 * Without the creation defaults: an override changes only what it names (a `.partial()` of the creation
 * schema would fill init_range_low/high and sample_size with their defaults and reset the stored values).
 */
const overridable = z.strictObject(
  Object.fromEntries(
    Object.entries(gaShape).map(([name, schema]) => [name, schema instanceof z.ZodDefault ? schema.unwrap() : schema]),
  ) as {
    [K in keyof typeof gaShape]: (typeof gaShape)[K] extends z.ZodDefault<infer Inner> ? Inner : (typeof gaShape)[K];
  },
);
export const reexecuteSchema = overridable.partial().extend({ logger: refusedLogger });
export const continueSchema = overridable
  .omit({ num_genes: true, gene_type: true, sol_per_pop: true })
  .partial()
  .extend({ logger: refusedLogger });
