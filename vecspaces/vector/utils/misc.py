"""Helpers for starting worker processes: :class:`CloudpickleWrapper` and :func:`clear_mpi_env_vars`."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import cloudpickle

__all__ = ["CloudpickleWrapper", "clear_mpi_env_vars"]


class CloudpickleWrapper:
    """Wrap a callable so it pickles with cloudpickle: lambdas and local functions can reach spawned workers.

    Args:
        fn: the callable, typically an environment factory.

    Example:
        >>> import pickle
        >>> make = CloudpickleWrapper(lambda: 42)
        >>> pickle.loads(pickle.dumps(make))()
        42
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __getstate__(self) -> bytes:
        return cloudpickle.dumps(self.fn)

    def __setstate__(self, state: bytes) -> None:
        self.fn = pickle.loads(state)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped callable with the given arguments and return its result."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"CloudpickleWrapper({self.fn!r})"


@contextmanager
def clear_mpi_env_vars() -> Iterator[None]:
    """Hide the MPI variables (``OMPI_*``, ``PMI_*``) from the environment while the block runs.

    MPI, when present, sees them in a child process and tries to start as if it were an MPI rank; remove
    them while starting worker processes, as Gymnasium does.

    Example:
        >>> os.environ["PMI_RANK"] = "0"
        >>> with clear_mpi_env_vars():
        ...     "PMI_RANK" in os.environ
        False
        >>> os.environ.pop("PMI_RANK")
        '0'
    """
    removed = {name: value for name, value in os.environ.items() if name.startswith(("OMPI_", "PMI_"))}
    for name in removed:
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(removed)
