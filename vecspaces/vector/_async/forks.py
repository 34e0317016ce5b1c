"""Copies of a vector env never stop its workers: a forked child's copies are disowned, other copies refused.

A child forked from the main process (``os.fork``, ``pty.fork``, a library forking to run a helper) gets a copy
of every object of its parent, vector envs included, and cleans up what it holds when it ends: the exit handler
of ``multiprocessing`` terminates every daemon process it believes to be its own child (the parent's workers),
and a vector env's finalizer or ``__del__`` stops its workers. Either would kill the parent's workers in the
middle of its run (Gymnasium's AsyncVectorEnv loses its workers to such a child). So right after a fork, the
child disowns each copy: its calls raise, ``close()`` releases nothing of the parent's, and its workers leave
the child's record of its children. A copy made in the same process (pickle, ``copy.copy``) would share the
workers too, and its garbage collection would close them under the original: it is refused (:func:`copy_refused`).
"""

from __future__ import annotations

import multiprocessing.process
import os
import weakref
from collections.abc import Iterable
from typing import Any, Protocol

from vecspaces.error import InvalidTypeError, message

__all__ = ["Inheritable", "copy_refused", "forget_children", "track"]


class Inheritable(Protocol):
    """A vector env whose copy in a forked child must be disowned."""

    def _disown(self) -> None:
        """Make this copy (in a forked child) refuse every call and release nothing of the parent's."""


_TRACKED: weakref.WeakSet[Any] = weakref.WeakSet()


def track(env: Inheritable) -> None:
    """Disown ``env``'s copy in every child this process forks from now on."""
    _TRACKED.add(env)


def forget_children(processes: Iterable[Any]) -> None:
    """Take the parent's processes out of this (forked) process's record of its children.

    ``multiprocessing`` would otherwise terminate the daemon ones when this process exits.
    """
    children = getattr(multiprocessing.process, "_children", None)  # private: CPython 3.10-3.14 keep it here
    if children is not None:
        children.difference_update(process for process in processes if process is not None)


def copy_refused(owner: str) -> InvalidTypeError:
    """The error of pickling or copying an ``owner`` (a vector env's class name)."""
    return InvalidTypeError(
        message(
            f"an {owner} cannot be pickled or copied",
            expected="the vector env used where it was made: its workers and shared memory belong to it",
            got="pickle, copy.copy or copy.deepcopy of it",
            fix="pickle or copy its env_fns and build a new vector env from them",
        )
    )


def _disown_all() -> None:
    for env in list(_TRACKED):
        env._disown()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_disown_all)
