"""A run's checkpoint: the GA's state at a generation boundary, written and read without pickle.

The file is one ``.npz`` (a zip of ``.npy`` arrays, read with ``numpy.load(allow_pickle=False)``):
the member ``__state__`` holds UTF-8 JSON (as ``uint8``), every numeric array is a member of its
own, referenced from the JSON by name.  The JSON is a tagged encoding of plain data (``encode``):

- ``null``/booleans/numbers/strings/lists as JSON (a Python float round-trips exactly through its
  ``repr``; NaN and infinities as Python's JSON writes them);
- ``{"$": "tuple"|"dict"|"pairs", "v": …}`` for tuples, dicts with text keys and other dicts;
- ``{"$": "nd", "k": name}`` a numeric array (one object shared by several attributes is written once
  and restored as one object); ``{"$": "ndo", "shape", "v"}`` an object array element by element;
- ``{"$": "np", "d": dtype, "v": value}`` a numpy scalar (bool, int, uint, float: exact);
- ``{"$": "rows"|"scalars"|"arrays", "k": name}`` a list of same-typed numpy rows/scalars/arrays
  (PyGAD's ``solutions``/``solutions_fitness``/histories) as one array;
- ``{"$": "RandomState"|"Random"|"Generator", …}`` a random generator's state.

Nothing else is written: callables, types, loggers and executors are rebuilt by constructing the GA
again from the job (the checkpoint restores the state, not the configuration), and an attribute of
any other kind makes ``capture`` raise ``CheckpointError`` (the run goes on without a checkpoint).
Design and the list of state: docs/architecture.md ("Durable runs"), docs/engine.md.
"""

from __future__ import annotations

import io
import json
import logging
import random
import zipfile
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["FORMAT", "CheckpointError", "capture", "decode", "encode", "read", "restore", "write"]

FORMAT = "allele-checkpoint/1"
STATE_MEMBER = "__state__"
# GA attributes that are caches or per-process resources: reset, never written.
RESET: dict[str, object] = {
    "_saved_fitness_indexes": {},  # PyGAD's own cache of saved solutions (rebuilt on use, same answers)
    "_space_cache": None,  # the engine's cache of the mutation space (keyed by identity)
    "_nsga_cache": None,  # the engine's cache of the last NSGA sort (engine/nsga.py)
    "_pareto_source": None,  # the sort pareto_fronts is built from when read: built before capture
}
SKIP = frozenset(
    {
        "_fitness_executor",
        "_fitness_executor_config",
        "_fitness_run_active",
        "_resume",
        "_warm_pool",  # the engine's parallel pool (engine/parallel.py): the resumed run opens its own
        "checkpoint_hook",
        "logger",
    }
)
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
_SCALAR_KINDS = "biuf"


class CheckpointError(Exception):
    """State that cannot be written (or a file that is not a checkpoint this worker can read)."""


def _static(value: object) -> bool:
    """Configuration the GA is rebuilt with (functions, types, loggers): not state."""
    if callable(value) or isinstance(value, (type, logging.Logger)):
        return True
    if isinstance(value, (list, tuple)) and value:
        return any(_static(v) for v in value) and all(
            v is None or _static(v) or isinstance(v, (int, float)) for v in value
        )
    return False


class _Writer:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._by_id: dict[int, str] = {}
        self._keep: list[object] = []  # keeps ids stable while encoding

    def array(self, value: np.ndarray) -> str:
        key = self._by_id.get(id(value))
        if key is None:
            key = f"a{len(self.arrays)}"
            self.arrays[key] = value
            self._by_id[id(value)] = key
            self._keep.append(value)
        return key

    def fresh(self, value: np.ndarray) -> str:
        key = f"a{len(self.arrays)}"
        self.arrays[key] = value
        return key


def _uniform_scalars(items: list[Any]) -> np.dtype | None:
    first = items[0]
    if not isinstance(first, np.generic) or first.dtype.kind not in _SCALAR_KINDS:
        return None
    dtype = first.dtype
    for item in items:
        if type(item) is not type(first) or item.dtype != dtype:
            return None
    return dtype


def encode(value: Any, writer: _Writer) -> Any:
    """``value`` as tagged JSON (arrays into ``writer``); ``CheckpointError`` for anything else."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int or type(value) is float:
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind in _SCALAR_KINDS:
            return {"$": "nd", "k": writer.array(value)}
        if value.dtype.kind == "O":
            return {"$": "ndo", "shape": list(value.shape), "v": [encode(v, writer) for v in value.reshape(-1)]}
        raise CheckpointError(f"an array of dtype {value.dtype} cannot be written")
    if isinstance(value, np.generic):
        if value.dtype.kind not in _SCALAR_KINDS:
            raise CheckpointError(f"a numpy scalar of dtype {value.dtype} cannot be written")
        return {"$": "np", "d": value.dtype.str, "v": value.item()}
    if type(value) is list:
        if value:
            packed = _pack_list(value, writer)
            if packed is not None:
                return packed
        return [encode(v, writer) for v in value]
    if type(value) is tuple:
        return {"$": "tuple", "v": [encode(v, writer) for v in value]}
    if type(value) is dict:
        if all(type(k) is str for k in value):
            return {"$": "dict", "v": {k: encode(v, writer) for k, v in value.items()}}
        return {"$": "pairs", "v": [[encode(k, writer), encode(v, writer)] for k, v in value.items()]}
    if type(value) is np.random.RandomState:
        return {"$": "RandomState", "s": encode(value.get_state(legacy=True), writer)}
    if type(value) is random.Random:
        return {"$": "Random", "s": encode(value.getstate(), writer)}
    if type(value) is np.random.Generator:
        state = value.bit_generator.state
        if state.get("bit_generator") not in _BIT_GENERATORS:
            raise CheckpointError(f"a {state.get('bit_generator')} generator cannot be written")
        return {"$": "Generator", "s": encode(state, writer)}
    raise CheckpointError(f"a {type(value).__name__} cannot be written")


def _pack_list(value: list[Any], writer: _Writer) -> Any:
    """A list of same-typed numpy scalars, rows of them, or same-shaped numeric arrays: one array."""
    first = value[0]
    if isinstance(first, np.generic):
        dtype = _uniform_scalars(value)
        if dtype is not None:
            return {"$": "scalars", "k": writer.fresh(np.array(value, dtype=dtype))}
        return None
    if type(first) is list and first:
        dtype = _uniform_scalars(first)
        if dtype is None:
            return None
        width = len(first)
        for row in value:
            if type(row) is not list or len(row) != width or _uniform_scalars(row) != dtype:
                return None
            if type(row[0]) is not type(first[0]):
                return None
        return {"$": "rows", "k": writer.fresh(np.array(value, dtype=dtype))}
    if type(first) is np.ndarray and first.dtype.kind in _SCALAR_KINDS:
        for item in value:
            if type(item) is not np.ndarray or item.dtype != first.dtype or item.shape != first.shape:
                return None
        return {"$": "arrays", "k": writer.fresh(np.stack(value))}
    return None


def decode(value: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """The value ``encode`` wrote (``CheckpointError`` for a malformed one)."""
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if type(value) is list:
        return [decode(v, arrays) for v in value]
    if type(value) is not dict:
        raise CheckpointError("malformed checkpoint")
    tag = value.get("$")
    try:
        if tag == "tuple":
            return tuple(decode(v, arrays) for v in value["v"])
        if tag == "dict":
            return {str(k): decode(v, arrays) for k, v in value["v"].items()}
        if tag == "pairs":
            return {_hashable(decode(k, arrays)): decode(v, arrays) for k, v in value["v"]}
        if tag == "nd":
            return arrays[value["k"]]
        if tag == "ndo":
            items = [decode(v, arrays) for v in value["v"]]
            out = np.empty(len(items), dtype=object)
            for index, item in enumerate(items):
                out[index] = item
            return out.reshape(tuple(int(n) for n in value["shape"]))
        if tag == "np":
            dtype = np.dtype(value["d"])
            if dtype.kind not in _SCALAR_KINDS:
                raise CheckpointError("malformed checkpoint scalar")
            return dtype.type(value["v"])
        if tag == "scalars":
            return list(arrays[value["k"]])
        if tag == "rows":
            return [list(row) for row in arrays[value["k"]]]
        if tag == "arrays":
            return [row.copy() for row in arrays[value["k"]]]
        if tag == "RandomState":
            state = np.random.RandomState()
            state.set_state(decode(value["s"], arrays))
            return state
        if tag == "Random":
            generator = random.Random()
            generator.setstate(decode(value["s"], arrays))
            return generator
        if tag == "Generator":
            state = decode(value["s"], arrays)
            name = state.get("bit_generator") if type(state) is dict else None
            if name not in _BIT_GENERATORS:
                raise CheckpointError("malformed checkpoint generator")
            bit_generator = getattr(np.random, name)()
            bit_generator.state = state
            return np.random.Generator(bit_generator)
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
        raise CheckpointError(f"malformed checkpoint ({type(exc).__name__})") from None
    raise CheckpointError("malformed checkpoint tag")


def _hashable(key: Any) -> Any:
    if isinstance(key, list):
        return tuple(_hashable(k) for k in key)
    if isinstance(key, np.ndarray):
        raise CheckpointError("malformed checkpoint key")
    return key


def capture(ga: Any, extra: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The GA's state (every attribute but configuration and caches), the global generators of
    ``numpy.random`` and ``random``, and ``extra`` (the loop's and the job's state), as the JSON
    document and its arrays."""
    if getattr(ga, "_pareto_source", None) is not None:
        ga.pareto_fronts  # noqa: B018 - the engine builds pareto_fronts when it is read (engine/nsga.py)
    writer = _Writer()
    attributes: dict[str, Any] = {}
    for name, value in vars(ga).items():
        if name in SKIP or name in RESET or _static(value):
            continue
        try:
            attributes[name] = encode(value, writer)
        except CheckpointError as exc:
            raise CheckpointError(f"{name}: {exc}") from None
    document = {
        "format": FORMAT,
        "attributes": attributes,
        "globals": {
            "numpy_random": encode(np.random.get_state(legacy=True), writer),
            "random": encode(random.getstate(), writer),
        },
        "extra": encode(dict(extra), writer),
    }
    return document, writer.arrays


def restore(ga: Any, document: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Put a captured state back into ``ga`` (built again from the same job) and the global
    generators; returns ``extra``."""
    if document.get("format") != FORMAT:
        raise CheckpointError("not a checkpoint of this format")
    attributes = document.get("attributes")
    if type(attributes) is not dict:
        raise CheckpointError("malformed checkpoint")
    values = {str(name): decode(value, arrays) for name, value in attributes.items()}
    extra = decode(document.get("extra"), arrays)
    globals_ = document.get("globals")
    if type(extra) is not dict or type(globals_) is not dict:
        raise CheckpointError("malformed checkpoint")
    numpy_state = decode(globals_.get("numpy_random"), arrays)
    python_state = decode(globals_.get("random"), arrays)
    for name, value in values.items():
        if name in SKIP or name in RESET or name.startswith("__"):
            continue
        setattr(ga, name, value)
    for name, value in RESET.items():
        if name in vars(ga):
            setattr(ga, name, type(value)() if isinstance(value, dict) else value)
    try:
        np.random.set_state(numpy_state)
        random.setstate(python_state)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"malformed checkpoint generators ({type(exc).__name__})") from None
    return extra


def write(
    sink: Callable[[bytes], object], document: Mapping[str, Any], arrays: Mapping[str, np.ndarray], limit: int
) -> int:
    """The checkpoint file's bytes given to ``sink`` (at most ``limit`` bytes, else
    ``CheckpointError`` and nothing is given); returns the size."""
    buffer = io.BytesIO()
    members = {STATE_MEMBER: np.frombuffer(json.dumps(document, separators=(",", ":")).encode(), dtype=np.uint8)}
    members.update(arrays)
    np.savez(buffer, allow_pickle=False, **members)
    data = buffer.getvalue()
    if len(data) > limit:
        raise CheckpointError(f"the checkpoint would take {len(data)} bytes, past the run's {limit}")
    sink(data)
    return len(data)


def read(data: bytes, limit: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A checkpoint file's document and arrays (never unpickles; ``CheckpointError`` for anything
    malformed or past ``limit`` bytes unpacked)."""
    if len(data) > limit:
        raise CheckpointError("the checkpoint is past the run's size cap")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if sum(info.file_size for info in archive.infolist()) > limit:
                raise CheckpointError("the checkpoint unpacks past the run's size cap")
        with np.load(io.BytesIO(data), allow_pickle=False) as loaded:
            arrays = {name: loaded[name] for name in loaded.files}
        state = arrays.pop(STATE_MEMBER)
        document = json.loads(state.tobytes().decode())
    except CheckpointError:
        raise
    except Exception as exc:  # noqa: BLE001 - hostile bytes: any parse failure is "not a checkpoint"
        raise CheckpointError(f"not a readable checkpoint ({type(exc).__name__})") from None
    if type(document) is not dict:
        raise CheckpointError("malformed checkpoint")
    return document, arrays
