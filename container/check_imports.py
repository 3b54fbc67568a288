"""The import direction of the GA worker's package, ``allele_worker/`` (as scripts/check-imports.mjs holds
src/'s): layers from the entry down to the wire, the worker side and the child side never importing
each other, no cycles.

    python3 container/check_imports.py      # from any directory; exit status 1 and one line a problem

Every import counts: at module level, inside functions (the child imports numpy-heavy code late), under
``TYPE_CHECKING``, and ``from . import name`` where ``name`` is a module.  A file belongs to the first
layer whose pattern matches its path under ``allele_worker/``; it may import its own layer (without a
cycle) or any layer below, never one above, and never the other side of an ``APART`` pair.  The
layers are container/README.md's ("Layout").  Standard library only.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent / "allele_worker"
NAME = "allele_worker"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("entry", ("__main__.py",)),
    (
        "the two sides: the worker (HTTP, runs, reports) and the child (its job, its GA, the fork server)",
        ("worker/", "child/"),
    ),
    ("the sandbox: the worker's spawn and watch, the child's confinement", ("sandbox/",)),
    ("the GA engine", ("engine/",)),
    ("ground: the wire types, their checks and the errors", ("wire.py", "validation.py", "errors.py", "__init__.py")),
]
# Never import each other, whatever their layers: they meet only through the layers below them.
APART: list[tuple[str, str]] = [("worker/", "child/")]

Graph = dict[Path, set[Path]]


def files(root: Path = PACKAGE) -> list[Path]:
    return sorted(path for path in root.rglob("*.py") if "__pycache__" not in path.parts)


def module_of(path: Path, root: Path = PACKAGE) -> list[str]:
    """``allele_worker/sandbox/plan.py`` → ``["allele_worker", "sandbox", "plan"]`` (a package's
    ``__init__.py`` is the package)."""
    parts = [NAME, *path.relative_to(root).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def file_of(module: list[str], root: Path = PACKAGE) -> Path | None:
    """The file of ``module`` (a list of names) in the package, or None when it is none of its files."""
    if not module or module[0] != NAME:
        return None
    base = root.joinpath(*module[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports_of(path: Path, root: Path = PACKAGE) -> set[Path]:
    """The package's files that ``path`` imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    module = module_of(path, root)
    package = module if path.name == "__init__.py" else module[:-1]
    found: set[Path] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = base + (node.module.split(".") if node.module else [])
            # ``from x import y``: y is a module of x, or a name x defines (then x is imported)
            targets = [
                target + [alias.name] if file_of(target + [alias.name], root) else target for alias in node.names
            ]
        else:
            continue
        for target in targets:
            found_file = file_of(target, root)
            if found_file is None and target[:1] == [NAME]:
                raise SystemExit(f"{path.relative_to(root.parent)}: cannot resolve import {'.'.join(target)}")
            if found_file is not None and found_file != path:
                found.add(found_file)
    return found


def import_graph(root: Path = PACKAGE) -> Graph:
    return {path: imports_of(path, root) for path in files(root)}


def _matches(rel: str, pattern: str) -> bool:
    return rel.startswith(pattern) if pattern.endswith("/") else rel == pattern


def layer_of(path: Path, root: Path = PACKAGE) -> int:
    rel = path.relative_to(root).as_posix()
    for index, (_, patterns) in enumerate(LAYERS):
        if any(_matches(rel, pattern) for pattern in patterns):
            return index
    raise SystemExit(f"allele_worker/{rel} belongs to no layer: add it to LAYERS in container/check_imports.py")


def _cycles(graph: Graph) -> Iterable[list[Path]]:
    """Each cycle once (Tarjan's strongly connected components of more than one file, or one that
    imports itself)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found: list[list[Path]] = []

    def visit(node: Path) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def problems(graph: Graph, root: Path = PACKAGE) -> list[str]:
    def name(path: Path) -> str:
        return f"allele_worker/{path.relative_to(root).as_posix()}"

    found = []
    for source in sorted(graph):
        for target in sorted(graph[source]):
            above, below = layer_of(source, root), layer_of(target, root)
            if below < above:
                found.append(
                    f"upward import: {name(source)} ({LAYERS[above][0]}) -> {name(target)} ({LAYERS[below][0]})"
                )
            rel_source, rel_target = (p.relative_to(root).as_posix() for p in (source, target))
            for one, other in APART:
                for a, b in ((one, other), (other, one)):
                    if rel_source.startswith(a) and rel_target.startswith(b):
                        found.append(f"across the sides: {name(source)} -> {name(target)} ({a} and {b} never meet)")
    for cycle in _cycles(graph):
        found.append("cycle: " + " -> ".join(name(p) for p in cycle))
    return found


def main() -> int:
    found = problems(import_graph())
    for line in found:
        print(line)
    if found:
        return 1
    print(f"allele_worker imports: {len(files())} files, every import runs down, none crosses the sides, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
