// What a run's code can import (docs/environment.md): the GA worker's environment as its own code lists it
// (container/allele_worker/worker/environment.py), written into environment.json by `npm run environment`
// and held to the worker's environment and to container/requirements.txt by
// container/tests/test_environment.py. Served by GET /api/v1/environment and shown by the dashboard's
// new-submission form; no worker is asked at request time (in production each run has a container of its own).
import listing from "./environment.json";

export interface EnvironmentPackage {
  /** The distribution's name (PEP 503 normalized): "scikit-learn", "tensorflow-cpu". */
  name: string;
  version: string;
  /** The top-level modules it provides: what a run imports ("sklearn", "tensorflow"). */
  modules: string[];
  /** One of the libraries the environment is curated for (listed first); the rest are their dependencies. */
  featured: boolean;
}

export interface Environment {
  /** The minor version ("3.11"): the image's patch release is python:3.11-slim's. */
  python: string;
  packages: EnvironmentPackage[];
  threads: { variables: string[]; description: string };
  memory: { tensorflow_min_memory_mb: number; description: string };
  data_files: { mount: string; read_only: boolean; available: boolean; description: string };
}

export const ENVIRONMENT: Environment = listing;
