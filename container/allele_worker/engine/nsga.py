"""Multi-objective selection (PyGAD's ``utils/nsga.py``, ``nsga2.py``, ``nsga3.py`` and the NSGA
selections of ``utils/parent_selection.py``): the non-dominated sort, the crowding-distance ranking and
NSGA-III's niching as vectorised kernels giving exactly stock's fronts, orders and draws, and the
``NSGA`` mixin that puts them behind stock's method names.

Stock PyGAD sorts the population into fronts by peeling (``get_non_dominated_set``: every remaining
solution compared with every other one in Python, once per front) and sorts a generation's fitness
three times (``best_solution``, the parent selection, the elites).  Here one sort per fitness array
serves them all (``_sorted``: cached by the array's bytes), and the sort itself is

- the domination matrix (``dominators``: ``D[i, j]`` — solution ``j`` is at least as good on every
  objective and better on one — by numpy comparisons, which treat NaN, infinities and equal rows as
  stock's per-pair numpy comparisons do), then the fronts by peeling with counts (``fronts_of``): a
  solution is in the next front when no remaining solution dominates it, exactly stock's rule, each
  front in ascending population order as stock builds it;
- the crowding distance of every front at once (``crowding_rank``): per objective a stable sort by
  value within each front, the boundary solutions infinite, the inner ones ``(next - previous) /
  (max - min)`` over the whole population (``1e-7`` for a zero range), summed objective by objective
  in stock's order; each front ranked by that sum, descending and stable; stock's special case of a
  two-solution front (only the first objective is looked at, so its order is that objective's,
  ascending) kept.  A NaN in the fitness or in a sum (``inf - inf``) is a case where Python's sort and
  ``min``/``max`` depend on the order they meet the values in: those fronts are ranked by stock's own
  ``crowding_distance``.

Each overridden method checks its input as stock does and raises stock's errors; a fitness that is
not a 2-D numeric array goes to stock's method.  ``pareto_fronts`` (PyGAD's list of ``[index,
objective vector]`` object arrays, updated by every selection) is built from the cached sort when it
is read.  Design and tests: docs/engine.md#multi-objective-selection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .base import EngineBase, FitnessValues, Genes, Indices, Mask

__all__ = ["NSGA", "NSGA_SELECTIONS", "NsgaSort", "crowding_rank", "dominators", "fronts_of", "nsga_sort"]

NSGA_SELECTIONS = ("nsga2", "tournament_nsga2", "nsga3", "tournament_nsga3")
# NSGA-III grows a smaller population to its number of reference points, C(M + p - 1, p) for M objectives
# and p divisions, known only after the first evaluation: at most the largest population a submission
# may ask for (docs/api.md#creation-parameters), else the run fails with this engine's error.
MAX_REFERENCE_POINTS = 5000
_CHUNK_CELLS = 1 << 22  # rows × population compared at once (bounds the temporaries' memory)
_TINY = 0.0000001  # stock's denominator for an objective whose range over the population is zero


def dominators(values: NDArray[Any]) -> Mask:
    """``D[i, j]``: solution ``j`` dominates solution ``i`` (every objective ``>=``, one ``>``;
    PyGAD maximises).  The diagonal is False (no value is ``>`` itself), as are the rows and columns
    of a solution holding a NaN (no comparison with NaN is true)."""
    n, m = values.shape
    dominated = np.empty((n, n), dtype=bool)
    step = max(1, _CHUNK_CELLS // max(1, n))
    for start in range(0, n, step):
        rows = values[start : start + step]
        at_least = np.ones((rows.shape[0], n), dtype=bool)
        better = np.zeros((rows.shape[0], n), dtype=bool)
        for k in range(m):
            column = values[:, k]
            mine = rows[:, k, None]
            at_least &= column >= mine
            better |= column > mine
        np.logical_and(at_least, better, out=dominated[start : start + step])
    return dominated


def fronts_of(dominated: Mask) -> tuple[list[Indices], NDArray[np.int64]]:
    """The Pareto fronts by peeling: front ``k`` is every solution left after fronts ``0..k-1`` that no
    solution left dominates, in ascending order; and each solution's front index (stock's
    ``solutions_fronts_indices``)."""
    n = dominated.shape[0]
    counts = dominated.sum(axis=1)
    left = np.ones(n, dtype=bool)
    front_index = np.full(n, -1, dtype=np.int64)
    fronts: list[Indices] = []
    remaining = n
    while remaining:
        front = np.flatnonzero(left & (counts == 0))
        if not front.size:  # impossible for a strict order; a guard, not a path
            raise RuntimeError("non-dominated sort: no front found among the solutions left")
        front_index[front] = len(fronts)
        left[front] = False
        remaining -= front.size
        fronts.append(front)
        if remaining:
            counts -= dominated[:, front].sum(axis=1)
    return fronts, front_index


def crowding_rank(
    values: NDArray[Any], fronts: list[Indices], front_index: NDArray[np.int64]
) -> tuple[Indices, NDArray[np.float64]] | None:
    """Stock's ``sort_solutions_nsga2`` order for all fronts at once (front by front, each by crowding
    distance, largest first) and each solution's crowding-distance sum as stock's
    ``crowding_distance`` gives it (``inf`` for both solutions of a two-solution front, NaN for a
    one-solution front, which has none).  None when a value or a sum is NaN, or a float type other
    than float64 or an integer range that could overflow makes stock's arithmetic differ: the caller
    asks stock."""
    n = values.shape[0]
    if values.dtype == np.float64:
        if np.isnan(values).any():
            return None
    elif values.dtype == np.int64:
        if n and int(values.max()) - int(values.min()) >= 2**62:
            return None
    else:
        return None
    sizes = np.fromiter((f.size for f in fronts), dtype=np.int64, count=len(fronts))
    size = sizes[front_index]
    sums = np.full(n, np.nan)
    sums[size == 2] = np.inf
    tiebreak = np.arange(n)
    pairs = [f for f in fronts if f.size == 2]
    if pairs:
        first, second = np.array(pairs).T
        # Stock ranks a two-solution front by its first objective only, ascending and stable.
        swap = values[second, 0] < values[first, 0]
        tiebreak[first[swap]], tiebreak[second[swap]] = second[swap], first[swap]
    big = np.flatnonzero(size >= 3)
    if big.size:
        try:
            with np.errstate(over="raise", invalid="raise"):
                sums[big] = _crowding_sums(values, big, front_index[big])
        except FloatingPointError:
            return None  # an overflow or an inf - inf: stock computes it (and warns as it does)
        if np.isnan(sums[big]).any():
            return None
    key = np.where(np.isnan(sums), 0.0, -sums)  # one-solution fronts: any key (alone in their front)
    ranking: Indices = np.lexsort((tiebreak, key, front_index))
    return ranking, sums


def _crowding_sums(values: NDArray[Any], big: Indices, group: NDArray[np.int64]) -> NDArray[np.float64]:
    """The crowding-distance sums of the solutions ``big`` (fronts of three or more; ``group``: their
    fronts), as stock's ``crowding_distance`` computes them front by front."""
    m = values.shape[1]
    distances = np.empty((m, big.size), dtype=np.float64)
    edge = np.empty(big.size, dtype=bool)
    for k in range(m):
        column = values[:, k]
        denominator = column.max() - column.min()
        if denominator == 0:
            denominator = _TINY
        v = column[big]
        order = np.lexsort((v, group))  # by front, then value; equal values in population order
        ordered = v[order]
        groups = group[order]
        edge[:] = False
        edge[0] = edge[-1] = True
        boundary = groups[1:] != groups[:-1]
        edge[1:][boundary] = True
        edge[:-1][boundary] = True
        out = np.empty(big.size, dtype=np.float64)
        inner = np.flatnonzero(~edge)
        out[inner] = (ordered[inner + 1] - ordered[inner - 1]) / denominator
        out[edge] = np.inf
        distances[k, order] = out
    total: NDArray[np.float64] = distances[0].copy()
    for k in range(1, m):
        total += distances[k]
    return total


@dataclass
class NsgaSort:
    """One fitness array sorted: its fronts (stock's order), each solution's front, and — when the
    vectorised ranking covers it — the NSGA-II order and the crowding-distance sums."""

    values: NDArray[Any]  # a copy of the fitness at the sort (the objective vectors of pareto_fronts)
    fronts: list[Indices]
    front_index: NDArray[np.int64]
    ranking: Indices | None = None
    sums: NDArray[np.float64] | None = None
    ranked: bool = False  # ranking/sums computed (they may still be None: stock's crowding then)

    def pareto_fronts(self) -> list[NDArray[Any]]:
        """PyGAD's ``pareto_fronts``: per front an object array of ``[population index, objective
        vector]`` rows, built as ``non_dominated_sorting`` builds them (fresh arrays each time, over a
        fresh copy of the values, as each of stock's sorts makes)."""
        rows = list(zip(range(self.values.shape[0]), self.values.copy()))
        return [np.array([rows[i] for i in front.tolist()], dtype=object) for front in self.fronts]


def nsga_sort(fitness: NDArray[Any]) -> NsgaSort:
    """The fronts of a 2-D numeric fitness (``dominators`` + ``fronts_of``)."""
    values = fitness.copy()
    fronts, front_index = fronts_of(dominators(values))
    return NsgaSort(values=values, fronts=fronts, front_index=front_index)


class NSGA(EngineBase):
    """Stock's NSGA methods over one cached sort per fitness array; see the module docstring."""

    _nsga_cache: tuple[str, tuple[int, ...], bytes, NsgaSort] | None = None
    _pareto_source: NsgaSort | None = None  # pareto_fronts to build from this sort when read
    _pareto_value: Any = None

    # --------------------------------------------------------------- pareto_fronts, built when read

    @property
    def pareto_fronts(self) -> Any:
        source = self.__dict__.get("_pareto_source")
        if source is not None:
            self._pareto_value = source.pareto_fronts().copy()  # stock keeps a copy of its list
            self._pareto_source = None
        return self.__dict__.get("_pareto_value")

    @pareto_fronts.setter
    def pareto_fronts(self, value: Any) -> None:
        self._pareto_source = None
        self._pareto_value = value

    def _set_pareto(self, sort: NsgaSort) -> None:
        self._pareto_source = sort
        self._pareto_value = None

    # --------------------------------------------------------------- the sort, once per fitness

    def _sorted(self, fitness: object) -> NsgaSort | None:
        """The cached sort of ``fitness`` (a 2-D numeric array), else None (stock sorts)."""
        if not isinstance(fitness, np.ndarray) or fitness.ndim != 2 or fitness.dtype.kind not in "fiu":
            return None
        if not fitness.shape[0]:
            return None
        data = fitness.tobytes()
        cached = self._nsga_cache
        if cached is not None and cached[0] == fitness.dtype.str and cached[1] == fitness.shape and cached[2] == data:
            self._note("selection", True)
            return cached[3]
        sort = nsga_sort(fitness)
        self._nsga_cache = (fitness.dtype.str, fitness.shape, data, sort)
        self._note("selection", True)
        return sort

    def _ranked(self, sort: NsgaSort) -> NsgaSort:
        if not sort.ranked:
            ranked = crowding_rank(sort.values, sort.fronts, sort.front_index)
            if ranked is not None:
                sort.ranking, sort.sums = ranked
            sort.ranked = True
        return sort

    def _front_crowding(self, sort: NsgaSort, number: int, fitness: FitnessValues) -> tuple[Indices, list[Any]]:
        """One front's population indices best first and ``[position, sum]`` rows best first (stock's
        ``crowding_dist_pop_sorted_indices`` and ``crowding_dist_sum``)."""
        self._ranked(sort)
        if sort.ranking is not None and sort.sums is not None:
            in_front = sort.ranking[sort.front_index[sort.ranking] == number]
            return in_front, [[None, value] for value in sort.sums[in_front]]
        _, sums, _, order = self.crowding_distance(pareto_front=sort.pareto_fronts()[number], fitness=fitness)
        return order, list(sums)

    def _nsga2_order(self, sort: NsgaSort, fitness: FitnessValues) -> list[Any]:
        """Stock's ``sort_solutions_nsga2`` list: population indices (numpy integers) best first."""
        self._ranked(sort)
        if sort.ranking is not None:
            return list(sort.ranking.astype(int))
        ordered: list[Any] = []
        for number, front in enumerate(sort.fronts):
            if front.size == 1:
                ordered.extend(front.astype(int))
            else:
                ordered.extend(self._front_crowding(sort, number, fitness)[0])
        return ordered

    # --------------------------------------------------------------- stock's methods

    def _bootstrap_nsga3_reference_points(self) -> None:
        objectives = len(self.last_generation_fitness[0])
        divisions = self.nsga3_num_divisions
        count = math.comb(objectives + divisions - 1, divisions)
        if count > MAX_REFERENCE_POINTS:
            raise ValueError(
                f"nsga3_num_divisions {divisions} with {objectives} objectives makes {count} NSGA-III reference "
                f"points, and PyGAD grows the population to that many; at most {MAX_REFERENCE_POINTS} (the "
                f"largest sol_per_pop): choose fewer divisions"
            )
        super()._bootstrap_nsga3_reference_points()

    def non_dominated_sorting(self, fitness: FitnessValues) -> tuple[list[NDArray[Any]], NDArray[np.int64]]:
        sort = self._sorted(fitness) if type(fitness[0]) is np.ndarray else None
        if sort is None:
            stock: tuple[list[NDArray[Any]], NDArray[np.int64]] = super().non_dominated_sorting(fitness)
            return stock
        return list(sort.pareto_fronts()), sort.front_index.copy()

    def sort_solutions_nsga2(self, fitness: FitnessValues, find_best_solution: bool = False) -> list[Any]:
        sort = self._sorted(fitness) if type(fitness[0]) is np.ndarray else None
        if sort is None:
            stock: list[Any] = super().sort_solutions_nsga2(fitness, find_best_solution=find_best_solution)
            return stock
        if not find_best_solution:
            self._set_pareto(sort)
        return self._nsga2_order(sort, fitness)

    def nsga2_selection(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        sort = self._sorted(fitness) if type(fitness[0]) is np.ndarray else None
        if sort is None:
            self._note("selection", False)
            stock: tuple[Genes, Indices] = super().nsga2_selection(fitness, num_parents)
            return stock
        self._set_pareto(sort)
        chosen: list[Indices] = []
        remaining = int(num_parents)
        for number, front in enumerate(sort.fronts):
            if not remaining:
                break
            if remaining >= front.size:
                chosen.append(front)
                remaining -= front.size
            else:
                chosen.append(np.asarray(self._front_crowding(sort, number, fitness)[0])[:remaining])
                remaining = 0
        indices = np.concatenate(chosen).astype(int) if chosen else np.array([], dtype=int)
        return self._nsga_parents(indices, int(num_parents))

    def _nsga_parents(self, indices: Indices, num_parents: int) -> tuple[Genes, Indices]:
        parents: Genes = self.initialize_parents_array((num_parents, self.population.shape[1]))
        parents[: len(indices), :] = self.population[indices, :]
        return parents, indices

    def tournament_selection_nsga2(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        sort = self._sorted(fitness) if type(fitness[0]) is np.ndarray else None
        if sort is None:
            self._note("selection", False)
            stock: tuple[Genes, Indices] = super().tournament_selection_nsga2(fitness, num_parents)
            return stock
        self._set_pareto(sort)
        num_parents = int(num_parents)
        front_index = sort.front_index
        draws = self.numpy_random_generator.randint(low=0, high=len(front_index), size=(num_parents, self.K_tournament))
        sizes = np.fromiter((f.size for f in sort.fronts), dtype=np.int64, count=len(sort.fronts))
        sums_by_front: dict[int, dict[int, Any]] = {}
        chosen: list[Any] = []
        for slot in range(num_parents):
            current = draws[slot]
            fronts = front_index[current]
            best = fronts.min()
            selected: Any = None
            candidates: Indices | None = None
            if (fronts == best).all():
                candidates = np.unique(current)
            elif int((fronts == best).sum()) == 1:
                selected = current[fronts == best][0]
            else:
                candidates = np.unique(current[fronts == best])
                if len(candidates) == 1:
                    selected = candidates[0]
            if selected is None and candidates is not None:
                if sizes[best] == 1:
                    selected = current[0]
                else:
                    by_index = sums_by_front.get(int(best))
                    if by_index is None:
                        order, rows = self._front_crowding(sort, int(best), fitness)
                        by_index = {int(i): row[1] for i, row in zip(np.asarray(order).tolist(), rows)}
                        sums_by_front[int(best)] = by_index
                    values = [by_index[i] for i in candidates.tolist()]
                    top = max(values)
                    if values.count(top) == 1:
                        selected = candidates[values.index(top)]
                    else:
                        selected = self.numpy_random_generator.choice(candidates)
            chosen.append(selected)
        indices = np.array(chosen)
        return self._nsga_parents(indices, num_parents)

    def nsga3_selection(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        sort = self._sorted(fitness) if type(fitness[0]) is np.ndarray else None
        if sort is None:
            self._note("selection", False)
            stock: tuple[Genes, Indices] = super().nsga3_selection(fitness, num_parents)
            return stock
        self._set_pareto(sort)
        accepted: list[int] = []
        critical: list[int] = []
        for front in sort.fronts:  # stock's _nsga3_accumulate_fronts
            members = front.tolist()
            if len(accepted) + len(members) <= num_parents:
                accepted.extend(members)
                if len(accepted) == num_parents:
                    break
            else:
                critical = members
                break
        if critical:
            picked = self._nsga3_pick_critical_front_survivors(accepted, critical, fitness, num_parents - len(accepted))
            final = accepted + picked
        else:
            final = accepted
        built: tuple[Genes, Indices] = self._nsga3_build_parents(final, num_parents)
        return built

    def tournament_selection_nsga3(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        sort = self._sorted(fitness) if type(fitness[0]) is np.ndarray else None
        if sort is None:
            self._note("selection", False)
            stock: tuple[Genes, Indices] = super().tournament_selection_nsga3(fitness, num_parents)
            return stock
        self._set_pareto(sort)
        matrix = np.array([list(row) for row in fitness], dtype=float)
        ideal = self.nsga3_compute_ideal_point(matrix)
        extremes = self.nsga3_find_extreme_points(matrix, ideal)
        intercepts = self.nsga3_compute_intercepts(extremes, ideal, matrix)
        normalized = self.nsga3_normalize_fitness(matrix, ideal, intercepts)
        associations, distances = self.nsga3_associate_to_reference_points(normalized, self.nsga3_reference_points)
        niche_counts = np.bincount(associations, minlength=len(self.nsga3_reference_points))
        draws = self.numpy_random_generator.randint(
            low=0, high=len(sort.front_index), size=(int(num_parents), self.K_tournament)
        )
        winners = tournament_nsga3_winners(draws, sort.front_index, associations, distances, niche_counts)
        built: tuple[Genes, Indices] = self._nsga3_build_parents(winners, num_parents)
        return built


def tournament_nsga3_winners(
    draws: NDArray[np.int64],
    front_index: NDArray[np.int64],
    associations: Indices,
    distances: NDArray[np.float64],
    niche_counts: NDArray[np.int64],
) -> list[int]:
    """Stock's ``_nsga3_pick_tournament_winner`` for every row of ``draws`` at once: the competitors
    of the best front; among them the lowest niche count, then the smallest distance, then the first
    drawn (``numpy.lexsort`` is stable)."""
    slots, k = draws.shape
    fronts = front_index[draws]
    finalist = fronts == fronts.min(axis=1, keepdims=True)
    niche = niche_counts[associations[draws]]
    distance = distances[draws]
    row = np.repeat(np.arange(slots), k)
    order = np.lexsort((distance.ravel(), niche.ravel(), (~finalist).ravel(), row))
    first = order.reshape(slots, k)[:, 0] % k
    return [int(v) for v in draws[np.arange(slots), first]]
