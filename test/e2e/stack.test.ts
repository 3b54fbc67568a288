// The scientific stack through the whole service (`wrangler dev` + the real GA worker, as `npm start` runs
// them; docs/environment.md): a fitness function using scikit-learn, pandas and scipy, and a Keras network
// trained for XOR by a GA through pygad.kerasga; the environment listing as the TypeScript client reads it.
import { beforeAll, describe, expect, it } from "vitest";
import { Allele } from "../../clients/typescript/src/index";
import { baseUrl, call, job, newAccount, waitForStatus } from "./client";

let key: string;

beforeAll(async () => {
  key = (await newAccount()).key;
});

const SCIENTIFIC = `import numpy
import pandas
from scipy.optimize import minimize_scalar
from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score
from sklearn.tree import DecisionTreeClassifier

X, y = load_iris(return_X_y=True)
TABLE = pandas.DataFrame({"depth": [1, 2, 3, 1, 2], "weight": [1.0, 0.5, 0.25, 1.0, 0.5]})
WEIGHT = TABLE.groupby("depth")["weight"].mean().to_dict()


def fitness(ga, solution, idx):
    depth = 1 + int(abs(solution[0])) % 3
    accuracy = float(cross_val_score(DecisionTreeClassifier(max_depth=depth, random_state=0), X, y, cv=3).mean())
    shift = minimize_scalar(lambda x: (x - solution[1]) ** 2).x
    return accuracy - 0.001 * WEIGHT[depth] - 0.001 * abs(shift - solution[1])
`;

const XOR = `import numpy
import tensorflow as tf
import pygad.kerasga

tf.keras.utils.set_random_seed(0)
MODEL = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(4, activation="tanh"), tf.keras.layers.Dense(1, activation="sigmoid")])
X = numpy.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype="float32")
Y = numpy.array([0, 1, 1, 0], dtype="float32")


def fitness(ga, solution, index):
    out = pygad.kerasga.predict(model=MODEL, solution=solution, data=X).ravel()
    return float(numpy.sum((out > 0.5) == (Y > 0.5))) + 1.0 - float(numpy.mean((out - Y) ** 2))
`;

const result = async (submissionId: string) => {
  const listed = await call(`/api/v1/results/?submission_id=${submissionId}`, { key });
  return (await call(`/api/v1/results/${listed.body.results[0].id}`, { key })).body;
};

describe("the scientific stack end to end", () => {
  it("runs a fitness function that uses scikit-learn, pandas and scipy", async () => {
    const created = await call("/api/v1/submissions/", {
      key,
      body: job({
        name: "sklearn pandas scipy",
        fitness_func: SCIENTIFIC,
        num_genes: 2,
        sol_per_pop: 6,
        num_generations: 4,
        random_seed: 5,
      }),
    });
    expect(created.status).toBe(202);
    const done = await waitForStatus(key, created.body.id);
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    const best = await result(created.body.id);
    expect(best.best_solution_fitness).toBeGreaterThan(0.9); // a tree of depth 2 or 3 on iris
  });

  it("trains a Keras network for XOR with pygad.kerasga (an API run: premium caps, 2048 MB)", async () => {
    const created = await call("/api/v1/submissions/", {
      key,
      body: job({
        name: "kerasga xor",
        fitness_func: XOR,
        num_genes: 17,
        sol_per_pop: 10,
        num_generations: 80,
        num_parents_mating: 6,
        mutation_percent_genes: 10,
        random_seed: 1,
        stop_criteria: "reach_4.5",
      }),
    });
    expect(created.status).toBe(202);
    const done = await waitForStatus(key, created.body.id, undefined, 240_000);
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect((await result(created.body.id)).best_solution_fitness).toBeGreaterThanOrEqual(4.5); // every answer right
  }, 300_000);

  it("lists the environment, with no key and through the TypeScript client", async () => {
    const keyless = await call("/api/v1/environment");
    expect(keyless.status).toBe(200);
    const environment = await new Allele({ apiKey: key, baseUrl: `${baseUrl()}/api/v1` }).environment();
    expect(environment).toEqual(keyless.body);
    expect(environment.python).toBe("3.11");
    const names = environment.packages.filter((p) => p.featured).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(["numpy", "scipy", "pandas", "scikit-learn", "tensorflow-cpu", "pygad"]));
  });
});
