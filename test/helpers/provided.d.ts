// What the workers projects' global setup (test/helpers/worker-process.ts) provides to the tests.
declare module "vitest" {
  export interface ProvidedContext {
    /** The GA worker's parameter names, as JSON: {"plain": [...], "code": [...]} (allele_worker/wire.py). */
    workerParameters: string;
  }
}

export {};
