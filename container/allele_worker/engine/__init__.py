"""The GA engine: stock ``pygad.GA`` or ``AcceleratedGA`` (its vectorised subclass), chosen per job.

``build_ga(kwargs)`` takes exactly the keyword arguments of ``pygad.GA`` and returns the GA to run;
``engine_label(ga)`` says which engine path ran (the completion report's ``engine`` field);
``run_ga(ga, hook, resume)`` runs either on the resumable loop (resumable.py: stock's ``run()`` with
a checkpoint hook at each generation boundary, and a resume entry).
Design, coverage and fall-back rules: docs/engine.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pygad import GA  # untyped: the GA is PyGAD's (or its AcceleratedGA subclass)

    from .resumable import CheckpointHook, LoopState

__all__ = ["build_ga", "coverage", "engine_label", "run_ga"]

STOCK = "pygad"
MULTI_OBJECTIVE_SELECTIONS = ("nsga2", "tournament_nsga2", "nsga3", "tournament_nsga3")
_INT_FLOAT = ("int", "float")


def coverage(kwargs: Mapping[str, object]) -> tuple[bool, str]:
    """Whether ``AcceleratedGA`` may run this configuration at all, and if not, why.

    Operators it does not vectorise (e.g. adaptive mutation, nsga2 selection, sbx crossover) are
    not a reason to refuse: the subclass hands those steps to stock PyGAD one by one.  What needs
    the whole run on stock PyGAD is a global property the fast paths assume."""
    gene_type = kwargs.get("gene_type", float)
    if gene_type not in (int, float):
        return False, "gene_type is not a single int/float"
    if kwargs.get("allow_duplicate_genes", True) is not True:
        return False, "allow_duplicate_genes is False"
    if kwargs.get("save_solutions") or kwargs.get("save_best_solutions"):
        return False, "save_solutions/save_best_solutions"
    if kwargs.get("gene_categorical") not in (None, False):
        return False, "gene_categorical"
    if kwargs.get("parent_selection_type") in MULTI_OBJECTIVE_SELECTIONS:
        # Multi-objective by construction: no fast path would ever run, so no hand-over cost either.
        return False, "a multi-objective selection"
    return True, "covered"


def build_ga(kwargs: Mapping[str, object]) -> GA:
    """``AcceleratedGA(**kwargs)`` when covered; for a multi-objective selection ``AcceleratedGA`` in
    its exact mode (stock's results for the same seed, the NSGA sort vectorised); else
    ``pygad.GA(**kwargs)``."""
    import pygad

    covered, _ = coverage(kwargs)
    if covered:
        from .accelerated import AcceleratedGA

        return AcceleratedGA(**kwargs)
    if kwargs.get("parent_selection_type") in MULTI_OBJECTIVE_SELECTIONS:
        from .accelerated import AcceleratedGA

        exact = AcceleratedGA(**kwargs)
        exact.exact_mode()
        return exact
    return pygad.GA(**kwargs)


def engine_label(ga: GA) -> str:
    """``"pygad"`` for stock PyGAD, else the accelerated GA's own label (≤ 64 characters)."""
    label = getattr(ga, "engine_label", None)
    return label()[:64] if callable(label) else STOCK


def run_ga(ga: GA, hook: CheckpointHook | None = None, resume: LoopState | None = None) -> None:
    """``resumable.run_ga``: the run, on the resumable loop (imported here: numpy and PyGAD load late)."""
    from .resumable import run_ga as run

    run(ga, hook, resume)
