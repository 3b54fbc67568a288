"""``AcceleratedGA``: a ``pygad.GA`` whose hot paths are vectorised for the configurations they cover.

PyGAD builds ``pygad.GA`` from one mixin per seam (parent selection, crossover, mutation, the engine's
loop and fitness, helpers); the accelerated engine puts one mixin in front of each seam it speeds up,
and each overridden method hands the call to ``super()`` (stock PyGAD) whenever its fast path does not
cover the current state.  Stock PyGAD's constructor, validation, callbacks, stop rules and outputs are
kept as they are.

==============================  ================================================================
mixin (module)                  fast path covers
==============================  ================================================================
``LeanLoop`` (``loop``)          ``run()``: stock's loop with the same operators and without
                                per-step re-validation when every step is covered
``Fitness`` (``fitness``)        ``cal_pop_fitness``: serial evaluation, no ``save_solutions``/
                                ``save_best_solutions``; same cache (elites, parents), calls and
                                validation.  ``best_solution``: a 1-D numeric fitness
``Selection`` (``selection``)    ``sss`` (exact: stock's parents, stock's order), ``tournament``,
                                ``random``, ``rank``, ``rws``, ``sus``: single objective
``Crossover`` (``crossover``)    ``single_point``, ``two_points``, ``uniform``, ``scattered``: one
                                gene type, duplicates allowed
``Mutation`` (``mutation``)      ``random_mutation``: one gene type ``int``/``float``, duplicates
                                allowed, ``gene_space`` None / one list of numbers / one
                                ``{low, high}`` dict
``Constraints``                 per-gene ``gene_constraint`` during random mutation with
(``constraints``)               ``gene_space`` None; the vectorised output check everywhere
==============================  ================================================================

A multi-objective fitness (detected from the first evaluation) turns every fast path off for the
rest of the run.  ``engine_label()`` says which paths ran.  Design and rules: docs/engine.md.
"""

from __future__ import annotations

import numpy as np
import pygad

from .constraints import Constraints
from .crossover import CROSSOVERS, Crossover
from .fitness import Fitness
from .loop import LeanLoop
from .mutation import Mutation
from .nsga import NSGA, NSGA_SELECTIONS
from .parallel import ParallelFitness
from .selection import SELECTIONS, Selection

__all__ = ["AcceleratedGA"]


# pygad.GA is untyped (Any to the type checker), so a subclass of it cannot be checked as one: the ignore.
class AcceleratedGA(
    LeanLoop,
    Fitness,
    ParallelFitness,
    Selection,
    NSGA,
    Crossover,
    Mutation,
    Constraints,
    pygad.GA,  # type: ignore[misc]
):
    """Drop-in ``pygad.GA``; see the module docstring for what is accelerated."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self._accel_active = True  # turned off for good by a multi-objective fitness (the exact mode)
        self._accel_used: dict[str, str] = {}  # step → "accelerated" | "pygad", as they ran
        self._rng = None
        self._space_cache = None
        self._handover = None  # (first fitness, its evaluations) for stock run() after lean run()
        super().__init__(*args, **kwargs)
        # The engine's own generator: seeded from random_seed, so a seeded run is reproducible.
        self._rng = np.random.default_rng(self.random_seed)

    def exact_mode(self) -> None:
        """Run in the exact mode from the start (a multi-objective selection): stock's operators and
        draws, the engine's exact steps only (fitness, the NSGA sort, stock's random mutation), so the
        results are stock PyGAD's for the same seed.  Before ``run()``: the constructor (stock's, plus
        the exact constraint pass) never uses the engine's own generator."""
        self._accel_active = False
        self._accel_used = {}

    def engine_label(self) -> str:
        """``"accelerated:<selection>+<crossover>+<mutation>"``, ``pygad`` for a step that fell
        back, ``mixed`` for one that did both; ``"exact:…"`` the same for the exact mode (a
        multi-objective run: stock's results, a step named bare ran the engine's exact code, ``=pygad``
        stock's own); at most 64 characters."""
        used = self._accel_used
        exact = not self._accel_active

        covered = {"selection": SELECTIONS, "crossover": CROSSOVERS + ("none",), "mutation": ("random", "none")}
        if exact:
            covered = {
                "selection": tuple(SELECTIONS) + NSGA_SELECTIONS,
                "crossover": ("none",),
                "mutation": ("random", "none"),
            }

        def part(step: str, name: object) -> str:
            name = "none" if name is None else str(name)  # lowercase: the label's alphabet
            state = used.get(step)
            if name not in covered[step]:
                state = "pygad"  # an operator this engine never vectorises
            if name == "none" or state == "accelerated" or (state is None and not exact):
                return name
            return f"{name}={state or 'pygad'}"

        selection = self.parent_selection_type if isinstance(self.parent_selection_type, str) else "custom"
        crossover = (
            self.crossover_type if isinstance(self.crossover_type, str) or self.crossover_type is None else "custom"
        )
        mutation = self.mutation_type if isinstance(self.mutation_type, str) or self.mutation_type is None else "custom"
        label = ("exact:" if exact else "accelerated:") + "+".join(
            (part("selection", selection), part("crossover", crossover), part("mutation", mutation))
        )
        if used.get("fitness") not in (None, "accelerated"):
            label += "+fitness=" + used["fitness"]
        return label[:64]
