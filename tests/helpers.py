"""Assertions shared by the test modules."""

from __future__ import annotations

from typing import Any

import numpy as np
import psutil
import pytest

from vecspaces.spaces import Space


def _gymnasium_version() -> tuple[int, ...]:
    try:
        import gymnasium
    except ImportError:
        return (1, 4)
    return tuple(int(part) for part in gymnasium.__version__.split(".")[:2] if part.isdigit())


# vecspaces follows Gymnasium 1.4 (the tests' extra installs the newest). Older releases, which users may be pinned
# to (Ray 2.60's RLlib pins 1.2.2), differ in a few behaviours that some tests compare with.
GYMNASIUM_VERSION = _gymnasium_version()
GYMNASIUM_BEFORE_1_4 = GYMNASIUM_VERSION < (1, 4)


def needs_gymnasium(since: tuple[int, int], difference: str) -> pytest.MarkDecorator:
    """Skip the test where the installed Gymnasium is older than ``since`` and behaves as ``difference`` says."""
    return pytest.mark.skipif(since > GYMNASIUM_VERSION, reason=f"Gymnasium before {since[0]}.{since[1]}: {difference}")


def skip_before_gymnasium(since: tuple[int, int], difference: str) -> None:
    """Skip the running case where the installed Gymnasium is older than ``since`` (see :func:`needs_gymnasium`)."""
    if since > GYMNASIUM_VERSION:
        pytest.skip(f"Gymnasium before {since[0]}.{since[1]}: {difference}")


def assert_same_value(a: Any, b: Any, path: str = "x") -> None:
    """Assert that two space values are equal in structure, type, dtype and content.

    Arrays must match in dtype, shape and values (NaN equal to NaN); numpy scalars in dtype and value;
    tuples, lists, dicts (keys in order) and GraphInstances recursively.
    """
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), f"{path}: {type(a)} vs {type(b)}"
        assert a.dtype == b.dtype, f"{path}: dtype {a.dtype} vs {b.dtype}"
        assert a.shape == b.shape, f"{path}: shape {a.shape} vs {b.shape}"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), f"{path}: {a} vs {b}"
    elif isinstance(a, np.generic) or isinstance(b, np.generic):
        assert type(a) is type(b), f"{path}: {type(a)} vs {type(b)}"
        assert a == b, f"{path}: {a!r} vs {b!r}"
    elif isinstance(a, dict):
        assert isinstance(b, dict), f"{path}: {type(a)} vs {type(b)}"
        assert list(a) == list(b), f"{path}: keys {list(a)} vs {list(b)}"
        for key in a:
            assert_same_value(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b), f"{path}: {type(a)} vs {type(b)}"
        assert len(a) == len(b), f"{path}: length {len(a)} vs {len(b)}"
        for index, (item_a, item_b) in enumerate(zip(a, b, strict=True)):
            assert_same_value(item_a, item_b, f"{path}[{index}]")
    else:
        assert type(a) is type(b), f"{path}: {type(a)} vs {type(b)}"
        assert a == b, f"{path}: {a!r} vs {b!r}"


def all_same_value(values: list[Any]) -> bool:
    """Whether every value equals the first one in the sense of :func:`assert_same_value`."""
    try:
        for value in values[1:]:
            assert_same_value(value, values[0])
    except AssertionError:
        return False
    return True


def same_rng_state(a: np.random.Generator, b: np.random.Generator) -> bool:
    """Whether two generators would produce the same stream."""
    return a.bit_generator.state == b.bit_generator.state


class Opaque(Space[Any]):
    """A custom space with nothing registered for it: vecspaces knows nothing about its values (dicts)."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(None, None, seed)

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        return {"opaque": int(self.np_random.integers(10))}

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and "opaque" in x

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque)

    def __repr__(self) -> str:
        return "Opaque()"


def is_running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, or one that exits while it is looked at, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
