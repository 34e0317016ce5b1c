"""The constructor options of :class:`~vecspaces.vector.AsyncVectorEnv`, checked, and the slicing they decide.

Each function takes an option as the user gave it and returns its checked value (or raises a
:mod:`vecspaces.error` exception naming the option, what it expects and what it got).
"""

from __future__ import annotations

import inspect
import itertools
import math
import multiprocessing
from multiprocessing.context import BaseContext
from typing import Any

import numpy as np

from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.vector._machine import allowed_cpus, usable_cores

__all__ = [
    "auto_pinning_cpus",
    "check_worker",
    "main_process_env_count",
    "max_concurrency",
    "pool_batch_size",
    "restart_attempts",
    "seconds",
    "wait_seconds",
    "split_envs",
    "start_context",
    "worker_count",
    "worker_cpus",
]


def seconds(name: str, requested: Any, *, least: float = 0.0) -> float:
    """A duration: a number of seconds >= ``least`` (infinity allowed, NaN not).

    Example:
        >>> seconds("timeout", 2), seconds("timeout", -1, least=-math.inf)
        (2.0, -1.0)
    """
    if isinstance(requested, (bool, np.bool_)) or not isinstance(requested, (int, float, np.integer, np.floating)):
        raise InvalidTypeError(message(f"{name} is not a number", expected="a number of seconds", got=show(requested)))
    value = float(requested)
    if math.isnan(value) or value < least:
        expected = "a number of seconds" + ("" if least == -math.inf else f" >= {least:g}")
        raise InvalidValueError(message(f"{name} is invalid", expected=expected, got=show(requested)))
    return value


def wait_seconds(requested: Any, default: float | None) -> float | None:
    """A wait's timeout: ``default`` (the vector env's) for None, else seconds.

    Negative seconds are taken: what remains of a caller's deadline, so the wait times out at once, as in Gymnasium.

    Example:
        >>> wait_seconds(None, 5.0), wait_seconds(-0.5, 5.0)
        (5.0, -0.5)
    """
    return default if requested is None else seconds("timeout", requested, least=-math.inf)


def restart_attempts(requested: int) -> int:
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < 1:
        raise InvalidValueError(message("restart_attempts is invalid", expected="an int >= 1", got=show(requested)))
    return requested


def main_process_env_count(requested: int, num_envs: int) -> int:
    if isinstance(requested, bool) or not isinstance(requested, int) or not 0 <= requested < num_envs:
        raise InvalidValueError(
            message(
                "main_process_envs is invalid",
                expected=f"an int in [0, {num_envs - 1}] (at least one env runs in a worker)",
                got=show(requested),
            )
        )
    return requested


def check_worker(worker: Any) -> None:
    """A custom worker is called with one ``WorkerConfig`` (Gymnasium's takes seven positional arguments)."""
    if worker is None:
        return
    problem = None if callable(worker) else "is not callable"
    if problem is None:
        try:
            inspect.signature(worker).bind(None)
        except TypeError:
            problem = "does not take one argument"
        except ValueError:  # no signature to inspect (some builtins): trust it
            pass
    if problem:
        raise InvalidTypeError(
            message(
                f"worker {problem}",
                expected="a function called in each worker process with one WorkerConfig",
                got=show(worker),
                fix="start from vecspaces.vector._async.worker.run_worker; Gymnasium's worker functions do not fit",
            )
        )


def max_concurrency(requested: Any) -> int | None:
    if requested is None:
        return None
    if isinstance(requested, (bool, np.bool_)) or not isinstance(requested, (int, np.integer)) or requested < 1:
        # A ValueError for a wrong type too, as Gymnasium raises.
        raise InvalidValueError(
            message("max_concurrency is invalid", expected="None or an int >= 1", got=show(requested))
        )
    return int(requested)


def pool_batch_size(requested: int | None, num_envs: int) -> int:
    if requested is None:
        return num_envs
    if isinstance(requested, bool) or not isinstance(requested, int) or not 1 <= requested <= num_envs:
        raise InvalidValueError(
            message("batch_size is invalid", expected=f"an int in [1, {num_envs}]", got=show(requested))
        )
    return requested


def start_context(requested: Any) -> BaseContext:
    """The multiprocessing context of a start method's name (None: the platform's default)."""
    methods = multiprocessing.get_all_start_methods()
    if requested is not None and requested not in methods:
        expected = "None or one of " + ", ".join(repr(method) for method in methods)
        raise InvalidValueError(message("context is invalid", expected=expected, got=show(requested)))
    return multiprocessing.get_context(requested)


def worker_count(requested: int | None, num_envs: int) -> int:
    if requested is None:
        return max(1, min(num_envs, usable_cores()))
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < 1:
        raise InvalidValueError(message("num_workers is invalid", expected="an int >= 1", got=show(requested)))
    return min(requested, num_envs)


def worker_cpus(pin: bool | None, num_workers: int) -> list[int | None]:
    """The CPU each worker pins itself to (None: not pinned); see ``pin_workers``."""
    if pin is not None and not isinstance(pin, bool):
        raise InvalidTypeError(message("pin_workers is invalid", expected="None, True or False", got=show(pin)))
    allowed = allowed_cpus()
    if not pin or allowed is None:
        return [None] * num_workers
    return [allowed[w % len(allowed)] for w in range(num_workers)]


def auto_pinning_cpus(pin: bool | None, num_workers: int) -> list[int] | None:
    """The CPUs the workers are pinned to while that pays (see ``affinity``), or None: never.

    Only for ``pin_workers=None`` with as many workers as CPUs the process may use (Linux): fewer workers leave
    the main process a core of its own, more would share cores pinned.
    """
    allowed = allowed_cpus()
    return allowed if pin is None and allowed is not None and len(allowed) == num_workers else None


def split_envs(num_envs: int, num_workers: int) -> list[range]:
    """Contiguous, balanced slices of env indices, one per worker."""
    bounds = np.linspace(0, num_envs, num_workers + 1).round().astype(int)
    return [range(int(lo), int(hi)) for lo, hi in itertools.pairwise(bounds)]
