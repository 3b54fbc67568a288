"""engine/nsga.py: the vectorised non-dominated sort, crowding-distance ranking and NSGA selections
give exactly what PyGAD's own functions give — fronts, their order, the NSGA-II order, the parents and
the random draws — on random small fitness matrices full of duplicates and ties, with NaN, infinities,
integer and float32 values; and whole seeded runs equal stock's."""

from __future__ import annotations

import numpy as np
import pygad
import pytest

from allele_worker.engine import build_ga, engine_label
from allele_worker.engine.accelerated import AcceleratedGA
from allele_worker.engine.nsga import crowding_rank, dominators, fronts_of

from .conftest import base


def seeds(count: int, first: int = 0) -> list[object]:
    """Seeds of a property test: the first in the fast loop, the others marked slow."""
    return [
        seed if seed == first else pytest.param(seed, marks=pytest.mark.slow) for seed in range(first, first + count)
    ]


def _pair(n: int) -> tuple[pygad.GA, AcceleratedGA]:
    kwargs = base(sol_per_pop=n, num_parents_mating=1, num_genes=3, keep_elitism=0)
    fast = AcceleratedGA(**kwargs)
    fast.exact_mode()
    return pygad.GA(**kwargs), fast


def _matrices(seed: int, count: int):
    """Random fitness matrices: few distinct values (ties, duplicate rows), sometimes NaN or ±inf,
    float64, int64 or float32, 2..4 objectives (sometimes 9, where a sum's order matters)."""
    rng = np.random.default_rng(seed)
    for case in range(count):
        n = int(rng.integers(1, 24)) if case % 4 else int(rng.integers(30, 70))  # several big fronts
        m = int(rng.choice([2, 2, 3, 4, 9])) if case % 4 else 2
        levels = int(rng.integers(2, 7))
        values = rng.integers(0, levels, size=(n, m)).astype(np.float64)
        if case % 3:
            values += rng.random((n, m)) * (case % 2)  # distinct values in every other case
        if case % 7 == 0 and n > 2:
            values[rng.integers(0, n, 2), rng.integers(0, m, 2)] = [np.inf, -np.inf]
        if case % 11 == 0 and n > 2:
            values[rng.integers(0, n), rng.integers(0, m)] = np.nan
        if case % 5 == 0:
            values[rng.integers(0, n, size=n // 2)] = values[0]  # duplicate rows
        kind = case % 9
        if kind == 4:
            values = np.floor(values).astype(np.int64) if np.isfinite(values).all() else values
        elif kind == 8:
            values = values.astype(np.float32)
        yield case, values


def _fronts(fronts):
    """Each front's indices and objective vectors (as text: NaN equals NaN)."""
    return [([int(i) for i in front[:, 0]], [repr(row.tolist()) for row in front[:, 1]]) for front in fronts]


def _nan_equal(a, b) -> bool:
    return bool(np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True))


@pytest.mark.parametrize("seed", seeds(6))
def test_the_sort_and_its_order_are_stocks(seed):
    for case, fitness in _matrices(seed, 60):
        n = fitness.shape[0]
        stock, fast = _pair(n)
        expected_fronts, expected_index = stock.non_dominated_sorting(fitness)
        got_fronts, got_index = fast.non_dominated_sorting(fitness)
        assert _fronts(got_fronts) == _fronts(expected_fronts), case
        assert got_index.tolist() == expected_index.tolist(), case
        assert all(f.dtype == object and f.shape[1] == 2 for f in got_fronts)
        expected = stock.sort_solutions_nsga2(fitness)
        got = fast.sort_solutions_nsga2(fitness)
        assert [int(i) for i in got] == [int(i) for i in expected], (case, fitness)
        assert [type(i) for i in got] == [type(i) for i in expected]
        assert _fronts(fast.pareto_fronts) == _fronts(stock.pareto_fronts)
        for k in {1, max(1, n // 3), n}:
            for name in ("nsga2_selection", "steady_state_selection"):
                a = getattr(stock, name)(fitness, k)
                b = getattr(fast, name)(fitness, k)
                assert a[1].tolist() == b[1].tolist(), (case, name, k)
                np.testing.assert_array_equal(a[0], b[0])
        if np.isfinite(fitness).all() or fitness.dtype.kind == "i":
            stock.population = fast.population = np.arange(n * 3, dtype=float).reshape(n, 3)
            a, b = stock.best_solution(fitness), fast.best_solution(fitness)
            assert a[2] == b[2] and type(a[2]) is type(b[2]) and _nan_equal(a[1], b[1]), case


@pytest.mark.parametrize("seed", seeds(4, 100))
def test_crowding_sums_and_order_per_front_are_stocks(seed):
    for case, fitness in _matrices(seed, 50):
        stock, fast = _pair(fitness.shape[0])
        fronts, _ = stock.non_dominated_sorting(fitness)
        sort = fast._sorted(fitness)
        assert sort is not None
        for number, front in enumerate(fronts):
            if front.shape[0] < 2:
                continue
            _, sums, _, order = stock.crowding_distance(pareto_front=front.copy(), fitness=fitness)
            got_order, got_rows = fast._front_crowding(sort, number, fitness)
            assert [int(i) for i in got_order] == order.tolist(), case
            assert _nan_equal([row[1] for row in got_rows], [row[1] for row in sums]), case


@pytest.mark.parametrize("seed", seeds(4, 200))
def test_tournament_selections_draw_and_choose_as_stock(seed):
    for case, fitness in _matrices(seed, 40):
        n, m = fitness.shape
        stock, fast = _pair(n)
        for ga in (stock, fast):
            ga.K_tournament = 1 + case % 4
            ga.numpy_random_generator = np.random.RandomState(case)
        a = stock.tournament_selection_nsga2(fitness, max(1, n // 2))
        b = fast.tournament_selection_nsga2(fitness, max(1, n // 2))
        assert a[1].tolist() == b[1].tolist(), case
        assert stock.numpy_random_generator.randint(1 << 30) == fast.numpy_random_generator.randint(1 << 30)
        if fitness.dtype != np.float64 or not np.isfinite(fitness).all():
            continue  # NSGA-III normalises in float and needs finite values (PyGAD checks them)
        for ga in (stock, fast):
            ga.nsga3_reference_points = ga.nsga3_generate_reference_points(m, 3)
            ga.numpy_random_generator = np.random.RandomState(case)
        for k in {1, max(1, n // 2), n}:
            for name in ("nsga3_selection", "tournament_selection_nsga3"):
                a = getattr(stock, name)(fitness, k)
                b = getattr(fast, name)(fitness, k)
                assert a[1].tolist() == b[1].tolist(), (case, name, k)
                np.testing.assert_array_equal(a[0], b[0])
        assert stock.numpy_random_generator.randint(1 << 30) == fast.numpy_random_generator.randint(1 << 30)


def test_known_fronts_ties_duplicates_and_nan():
    fitness = np.array(
        [[1, 5], [2, 4], [2, 4], [1, 4], [3, 1], [0, 0], [3, 0.5], [np.nan, 9], [np.inf, -np.inf]], dtype=float
    )
    fronts, index = fronts_of(dominators(fitness))
    # NaN compares false both ways: row 7 is in the first front and dominates nothing.
    assert [f.tolist() for f in fronts] == [[0, 1, 2, 4, 7, 8], [3, 6], [5]]
    assert index.tolist() == [0, 0, 0, 1, 0, 2, 1, 0, 0]
    assert crowding_rank(fitness, fronts, index) is None  # NaN: stock's crowding decides
    finite = fitness[:7]
    fronts, index = fronts_of(dominators(finite))
    ranked = crowding_rank(finite, fronts, index)
    assert ranked is not None
    # Front [0, 1, 2, 4]: 0 and 4 are the extremes (inf); the twins 1 and 2 tie, kept in index order.
    # Front [3, 6]: two solutions, ordered by the first objective only (stock's quirk).
    assert ranked[0].tolist() == [0, 4, 1, 2, 3, 6, 5]
    stock, _ = _pair(7)
    assert [int(i) for i in stock.sort_solutions_nsga2(finite)] == ranked[0].tolist()


def two(ga, solution, index):
    return [-float(np.sum(solution**2)), -float(np.sum((solution - 1.0) ** 2))]


def three(ga, solution, index):
    return [-float(np.sum(solution**2)), -float(np.sum((solution - 1.0) ** 2)), -float(np.sum((solution + 1) ** 2))]


def rounded(ga, solution, index):
    return [round(-float(np.sum(solution**2))), round(-float(np.sum((solution - 1.0) ** 2)))]


def batch(ga, solutions, indices):
    return np.stack([-np.sum(solutions**2, axis=1), -np.sum((solutions - 1.0) ** 2, axis=1)], axis=1)


RUNS = {
    "nsga2": dict(fitness_func=two, parent_selection_type="nsga2"),
    "tournament_nsga2": dict(fitness_func=rounded, parent_selection_type="tournament_nsga2", K_tournament=4),
    "nsga3": dict(fitness_func=three, parent_selection_type="nsga3", nsga3_num_divisions=4),
    "tournament_nsga3": dict(fitness_func=three, parent_selection_type="tournament_nsga3", nsga3_num_divisions=3),
    "nsga3 grown": dict(fitness_func=three, parent_selection_type="nsga3", nsga3_num_divisions=6, sol_per_pop=12),
    "sss, several objectives": dict(fitness_func=rounded),
    "batches": dict(fitness_func=batch, parent_selection_type="nsga2", fitness_batch_size=7),
    "per-gene mutation ranges": dict(
        fitness_func=two,
        parent_selection_type="nsga2",
        random_mutation_min_val=[-1, 0, 2, -3, 0, 0, 1, 1],
        random_mutation_max_val=[1, 0, -2, 3, 1, 1, 1, 0],
        mutation_num_genes=3,
    ),
    "mutation by replacement": dict(fitness_func=two, parent_selection_type="nsga2", mutation_by_replacement=True),
    "sbx and polynomial": dict(
        fitness_func=two, parent_selection_type="nsga2", crossover_type="sbx", mutation_type="polynomial"
    ),
    "keep_parents": dict(fitness_func=two, parent_selection_type="nsga2", keep_elitism=0, keep_parents=3),
    "saturate": dict(fitness_func=rounded, parent_selection_type="nsga2", stop_criteria="saturate_3"),
}


@pytest.mark.parametrize("config", list(RUNS))
@pytest.mark.parametrize("seed", seeds(3))
def test_a_seeded_run_is_stocks(config, seed):
    """Population, history, parents, elites, fronts and best solution equal stock's, per seed."""
    kwargs = base(
        **{"num_generations": 15, "sol_per_pop": 30, "num_parents_mating": 8, "random_seed": seed, **RUNS[config]}
    )
    stock = pygad.GA(**kwargs)
    stock.run()
    ga = build_ga(kwargs)
    ga.run()
    assert engine_label(ga).startswith("exact:")
    for name in ("population", "last_generation_parents_indices", "last_generation_elitism_indices"):
        np.testing.assert_array_equal(getattr(ga, name), getattr(stock, name), err_msg=name)
    np.testing.assert_array_equal(np.array(ga.best_solutions_fitness), np.array(stock.best_solutions_fitness))
    assert ga.best_solution_generation == stock.best_solution_generation
    assert _fronts(ga.pareto_fronts) == _fronts(stock.pareto_fronts)
    a, b = ga.best_solution(ga.last_generation_fitness), stock.best_solution(stock.last_generation_fitness)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[2] == b[2] and np.array_equal(a[1], b[1])
    assert ga.numpy_random_generator.randint(1 << 30) == stock.numpy_random_generator.randint(1 << 30)
    assert ga.python_random_generator.random() == stock.python_random_generator.random()


def test_the_exact_mutation_runs_where_it_covers_and_stocks_elsewhere():
    ga = build_ga(base(fitness_func=two, parent_selection_type="nsga2"))
    ga.run()
    assert engine_label(ga) == "exact:nsga2+single_point=pygad+random"
    ga = build_ga(base(fitness_func=two, parent_selection_type="nsga2", mutation_probability=0.3))
    ga.run()
    assert engine_label(ga) == "exact:nsga2+single_point=pygad+random=pygad"


def test_pareto_fronts_is_built_when_read_and_can_be_set():
    ga = build_ga(base(fitness_func=two, parent_selection_type="nsga2"))
    assert ga.pareto_fronts is None
    ga.run()
    fronts = ga.pareto_fronts
    assert fronts is ga.pareto_fronts  # built once, then the same list as stock's attribute
    ga.pareto_fronts = ["mine"]
    assert ga.pareto_fronts == ["mine"]


def test_nsga3_refuses_to_grow_the_population_past_the_largest_one():
    """PyGAD grows the population to C(M + p - 1, p) reference points (M known after the first
    evaluation): 10 objectives and 12 divisions would make 293,930 solutions."""

    def ten(ga, solution, index):
        return [float(solution[i % len(solution)]) * i for i in range(10)]

    ga = build_ga(base(fitness_func=ten, parent_selection_type="nsga3", nsga3_num_divisions=12))
    with pytest.raises(ValueError, match="makes 293930 NSGA-III reference points"):
        ga.run()
    assert ga.generations_completed == 0
