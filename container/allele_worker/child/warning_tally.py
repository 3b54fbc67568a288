"""The run's Python warnings (PyGAD's and the user's own), counted and deduplicated.

Every warning is counted (the ``always`` filter: Python's default shows one per code location), under
its *template*, its text with every number replaced, so "gene 3 at generation 7" and "gene 5 at
generation 9" are one warning seen twice.  The first warning of each template is printed to the
run's output as a plain line (user code named by field and line, worker paths never); repeats, and
templates past ``MAX_DISTINCT``, are only counted, so a warning raised every generation cannot flood
the output, nor can many different ones.  ``entries()`` is what the run reports:
``[{"message": first text, "count": n}]`` in order of first appearance.
"""

from __future__ import annotations

import re
import sys
import warnings
from typing import TextIO

from ..wire import WARNING_MESSAGE_LIMIT, WARNING_TEMPLATES, WarningEntry

__all__ = ["MAX_DISTINCT", "MESSAGE_LIMIT", "WarningTally", "template"]

MAX_DISTINCT = WARNING_TEMPLATES  # templates kept; later new ones are counted together (see entries())
MESSAGE_LIMIT = WARNING_MESSAGE_LIMIT  # characters of a message kept
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b", re.IGNORECASE)


def template(message: str) -> str:
    """The message with every number (ints, decimals, exponents, nan/inf) replaced by ``#``."""
    return _NUMBER.sub("#", message)


def _clip(text: str) -> str:
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


class WarningTally:
    """Counts warnings by template; installed as ``warnings.showwarning`` by ``install()``."""

    def __init__(self, code_fields: tuple[str, ...], stream: TextIO | None = None) -> None:
        self.code_fields = code_fields
        self.stream = stream
        self._counts: dict[str, tuple[str, int]] = {}  # template -> (first message, count)
        self._overflow = 0

    def install(self) -> None:
        warnings.simplefilter("always")
        warnings.showwarning = self.show

    def add(self, message: str) -> bool:
        """Count one warning (Allele's own notes go through here too); whether it is the first of a
        new entry (a template past ``MAX_DISTINCT`` is not: it is only counted with the others)."""
        message = _clip(message)
        key = template(message)
        entry = self._counts.get(key)
        if entry is not None:
            self._counts[key] = (entry[0], entry[1] + 1)
        elif len(self._counts) < MAX_DISTINCT:
            self._counts[key] = (message, 1)
            return True
        else:
            self._overflow += 1
        return False

    def show(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        name = filename.strip("<>")
        where = f"{name} line {lineno}: " if name in self.code_fields else ""
        text = f"{where}{category.__name__}: {message}"
        if self.add(text):
            print(text, file=self.stream or sys.stderr)

    def state(self) -> list[object]:
        """The tally as plain data (a run's checkpoint): ``[[template, first message, count]…, overflow]``."""
        return [[key, message, count] for key, (message, count) in self._counts.items()] + [self._overflow]

    def restore(self, state: object) -> None:
        """The tally a checkpoint held (``state()``); anything malformed leaves it as it is."""
        if not isinstance(state, list) or not state or type(state[-1]) is not int:
            return
        counts: dict[str, tuple[str, int]] = {}
        for item in state[:-1][:MAX_DISTINCT]:
            if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)):
                return
            if not (isinstance(item[1], str) and type(item[2]) is int):
                return
            counts[item[0]] = (item[1], item[2])
        self._counts, self._overflow = counts, state[-1]

    def entries(self) -> list[WarningEntry]:
        """``[{"message", "count"}]`` in order of first appearance; warnings of templates past
        ``MAX_DISTINCT`` are counted in one last entry."""
        found: list[WarningEntry] = [{"message": message, "count": count} for message, count in self._counts.values()]
        if self._overflow:
            found.append(
                {"message": f"other warnings (more than {MAX_DISTINCT} different ones)", "count": self._overflow}
            )
        return found
