"""Parent selection (PyGAD's ``utils/parent_selection.py`` seam): the vectorised kernels and the
``Selection`` mixin that puts them behind stock's method names, handing each call to stock PyGAD
when its state is not covered (a multi-objective or NaN fitness)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .base import EngineBase, FitnessValues, Floats, Genes, Indices

__all__ = ["SELECTIONS", "Selection", "select_parents", "sss_order"]

# A selection method of stock PyGAD's: (fitness, number of parents) → (parents, their indices).
Selector = Callable[[FitnessValues, int], tuple[Genes, Indices]]

SELECTIONS = {
    "sss": "steady_state_selection",
    "tournament": "tournament_selection",
    "random": "random_selection",
    "rank": "rank_selection",
    "rws": "roulette_wheel_selection",
    "sus": "stochastic_universal_selection",
}


def sss_order(fitness: FitnessValues) -> Indices:
    """Indices best → worst, exactly as PyGAD's ``sort_solutions_nsga2`` for one objective:
    ``sorted(range(n), key=fitness)`` (stable, ascending) then reversed, so among equal fitness
    the later index comes first."""
    order: Indices = fitness.argsort(kind="stable")[::-1]
    return order


def _wheel(probs: Floats, pointers: NDArray[np.floating[Any]]) -> Indices:
    """Index whose ``[start, end)`` slice of PyGAD's wheel (slices laid out in ``argsort(probs)``
    order, see ``wheel_cumulative_probs``) holds each pointer.  A pointer past the last end (float
    rounding; stock PyGAD would drop that parent and fail) takes the last slice."""
    order = np.argsort(probs)
    cumulative = np.cumsum(probs[order])
    position = np.searchsorted(cumulative, pointers, side="right")
    np.minimum(position, len(order) - 1, out=position)
    chosen: Indices = order[position]
    return chosen


def select_parents(
    kind: str,
    fitness: FitnessValues,
    num_parents: int,
    rng: np.random.Generator,
    k_tournament: int = 3,
    probabilities: Floats | None = None,
    order: Indices | None = None,
) -> Indices:
    """Parent indices for ``sss``, ``tournament``, ``random``, ``rank``, ``rws`` or ``sus``.

    ``probabilities`` (rws/sus) are PyGAD's own ``fitness_selection_probabilities``; ``order``,
    when the caller has it already, is ``sss_order(fitness)``."""
    if kind == "sss":
        return (sss_order(fitness) if order is None else order)[:num_parents].copy()
    n = fitness.shape[0]
    if kind == "random":
        return rng.integers(0, n, size=num_parents)
    if kind == "tournament":
        order = sss_order(fitness) if order is None else order
        rank = np.empty(n, dtype=np.intp)
        rank[order] = np.arange(n)
        candidates = rng.integers(0, n, size=(num_parents, int(k_tournament)))
        winners = np.argmin(rank[candidates], axis=1)
        winning: Indices = candidates[np.arange(num_parents), winners]
        return winning
    if kind == "rank":
        order = sss_order(fitness) if order is None else order
        ranks = np.arange(n, 0, -1)
        probs = ranks / np.sum(ranks)
        return order[_wheel(probs, rng.random(num_parents))]
    if kind in ("rws", "sus") and probabilities is None:
        raise ValueError(f"{kind} selection needs PyGAD's selection probabilities")
    if kind == "rws" and probabilities is not None:
        return _wheel(probabilities, rng.random(num_parents))
    if kind == "sus" and probabilities is not None:
        distance = 1.0 / num_parents
        first = rng.uniform(0.0, distance)
        return _wheel(probabilities, first + np.arange(num_parents) * distance)
    raise ValueError(f"not a vectorised selection: {kind}")


class Selection(EngineBase):
    """Stock's selection methods, vectorised for a single-objective numeric fitness."""

    def _parent_indices(
        self, kind: str, fitness: FitnessValues, num_parents: int, order: Indices | None = None
    ) -> Indices:
        """The parents' indices (``select_parents`` with this GA's settings and generator)."""
        # rws/sus: stock's own probabilities (and errors)
        probabilities = self.fitness_selection_probabilities(fitness) if kind in ("rws", "sus") else None
        return select_parents(kind, fitness, num_parents, self._generator(), self.K_tournament, probabilities, order)

    def _select(self, kind: str, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices] | None:
        if not (
            self._accel_active
            and self._single_objective(fitness)
            and not (fitness.dtype.kind == "f" and np.isnan(fitness).any())
            and isinstance(self.population, np.ndarray)
            and fitness.shape[0] == self.population.shape[0]
        ):
            return None
        indices = self._parent_indices(kind, fitness, int(num_parents))
        parents: Genes = self.initialize_parents_array((int(num_parents), self.population.shape[1]))
        parents[:, :] = self.population[indices, :]
        return parents, indices

    def steady_state_selection(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        chosen = self._select("sss", fitness, num_parents)
        if chosen is None:
            stock: tuple[Genes, Indices] = super().steady_state_selection(fitness, num_parents)
            return stock
        return chosen

    def _selection(self, kind: str, fitness: FitnessValues, num_parents: int, stock: Selector) -> tuple[Genes, Indices]:
        chosen = self._select(kind, fitness, num_parents)
        if self._accel_active:  # else the exact mode's NSGA sort notes the step (engine.nsga)
            self._note("selection", chosen is not None)
        return stock(fitness, num_parents) if chosen is None else chosen

    def tournament_selection(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        return self._selection("tournament", fitness, num_parents, super().tournament_selection)

    def random_selection(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        return self._selection("random", fitness, num_parents, super().random_selection)

    def rank_selection(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        return self._selection("rank", fitness, num_parents, super().rank_selection)

    def roulette_wheel_selection(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        return self._selection("rws", fitness, num_parents, super().roulette_wheel_selection)

    def stochastic_universal_selection(self, fitness: FitnessValues, num_parents: int) -> tuple[Genes, Indices]:
        return self._selection("sus", fitness, num_parents, super().stochastic_universal_selection)

    def run_select_parents(self, call_on_parents: bool = True) -> None:
        if self.parent_selection_type == "sss" and call_on_parents and self._accel_active:
            # steady_state_selection also serves elitism; note the parent step here only.
            self._note("selection", True)
        super().run_select_parents(call_on_parents=call_on_parents)
