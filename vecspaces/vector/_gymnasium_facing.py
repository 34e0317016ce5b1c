"""The Gymnasium face of a vector env: what a user who brings Gymnasium gets back.

A vector env built over ``gymnasium.Env`` instances (or given Gymnasium spaces or Gymnasium's
``AutoresetMode``) shows Gymnasium's types: it becomes an instance of a subclass that also derives from
``gymnasium.vector.VectorEnv``, its four public spaces are ``gymnasium.spaces`` objects and
``metadata["autoreset_mode"]`` is Gymnasium's enum. So Gymnasium's vector wrappers, ``make_vec`` and the
``isinstance`` checks of training scripts accept it after a one-line swap.

Only the face changes, once, at construction: the env keeps its vecspaces spaces privately and every step runs
on them, so nothing is converted per step (observations and actions are numpy arrays in both libraries).
Whether the user brought Gymnasium is read from ``sys.modules``: if gymnasium was never imported, nothing the
user passed can be Gymnasium's, and vecspaces never imports it.
"""

from __future__ import annotations

import copyreg
import sys
from typing import Any

__all__ = ["brought_gymnasium", "gymnasium_arguments", "gymnasium_facing"]

_FACING: dict[type, type] = {}  # vector env class -> its Gymnasium-facing subclass, made once


def brought_gymnasium(*objects: Any) -> bool:
    """Whether any of ``objects`` is a Gymnasium env, space or ``AutoresetMode`` (without importing gymnasium).

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> brought_gymnasium(Discrete(2), "NextStep", None)
        False
    """
    gymnasium = sys.modules.get("gymnasium")
    if gymnasium is None:
        return False
    kinds = (gymnasium.Env, gymnasium.spaces.Space, gymnasium.vector.AutoresetMode)
    return any(isinstance(item, kinds) for item in objects)


def gymnasium_arguments(autoreset_mode: Any, observation_mode: Any) -> bool:
    """Whether a vector env's ``autoreset_mode`` or ``(batched, single)`` observation spaces are Gymnasium's."""
    return brought_gymnasium(autoreset_mode, *(observation_mode if isinstance(observation_mode, tuple) else ()))


def gymnasium_facing(cls: type, base: str = "VectorEnv") -> type:
    """The subclass of the vector env class ``cls`` that is also a ``gymnasium.vector.<base>``.

    ``cls`` comes first in the method order, so every method and property of the vector env is its own; the
    Gymnasium base only adds what ``isinstance`` and Gymnasium's wrappers look for. The subclass keeps the
    name of ``cls``, so reprs and messages do not change. Wrappers take ``VectorWrapper`` as their base.
    """
    facing = _FACING.get(cls)
    if facing is None:
        import gymnasium

        facing = _FACING[cls] = type(
            cls.__name__,
            (cls, getattr(gymnasium.vector, base)),
            {
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                "__doc__": cls.__doc__,
                "__reduce_ex__": _reduce_facing,
            },
        )
    return facing


def _reduce_facing(self: Any, protocol: Any) -> Any:
    # pickle finds a class by its module and name, which lead to ``cls``, not to the subclass made here: pickle
    # the instance as one of ``cls`` that faces Gymnasium again where it is loaded.
    facing = type(self)
    cls, base = facing.__bases__
    reduced = super(facing, self).__reduce_ex__(protocol)
    if reduced[0] is copyreg.__newobj__ and reduced[1][0] is facing:  # type: ignore[attr-defined]
        return (_facing_instance, (cls, base.__name__), *reduced[2:])
    return reduced


def _facing_instance(cls: type, base: str) -> Any:
    """An empty instance of the Gymnasium-facing subclass of ``cls``, which unpickling then fills."""
    return object.__new__(gymnasium_facing(cls, base))
