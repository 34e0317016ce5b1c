"""The Gymnasium face of a vector env: what a user who brings Gymnasium gets back.

A vector env built over ``gymnasium.Env`` instances or envs with Gymnasium spaces (or given Gymnasium's
``AutoresetMode`` or spaces) shows Gymnasium's types: it becomes an instance of a subclass that also derives from
``gymnasium.vector.VectorEnv`` and ``metadata["autoreset_mode"]`` is Gymnasium's enum. So Gymnasium's vector
wrappers, ``make_vec`` and the ``isinstance`` checks of training scripts accept it after a one-line swap. Each
of its public spaces is of the library the envs' space is of (:class:`Face`): ``gymnasium.spaces`` objects where
the envs have Gymnasium spaces, vecspaces' where a ``gymnasium.Env``'s module swapped its spaces to vecspaces'
(whose values, a vecspaces ``GraphInstance`` for one, then match them).

Only the face changes, once, at construction: the env keeps its vecspaces spaces privately and every step runs
on them, so nothing is converted per step (observations and actions are numpy arrays in both libraries).
Whether the user brought Gymnasium is read from ``sys.modules``: if gymnasium was never imported, nothing the
user passed can be Gymnasium's, and vecspaces never imports it.
"""

from __future__ import annotations

import copyreg
import sys
from typing import Any, NamedTuple

from vecspaces._ops.gymnasium import is_gymnasium_space

__all__ = ["Face", "brought_gymnasium", "face_of_arguments", "face_of_env", "gymnasium_facing"]

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
    kinds = (gymnasium.Env, gymnasium.vector.AutoresetMode)
    return any(isinstance(item, kinds) or is_gymnasium_space(item) for item in objects)


class Face(NamedTuple):
    """What a vector env shows of Gymnasium: whether it is a ``gymnasium.vector.VectorEnv``, and which spaces are.

    Example:
        >>> Face(True, True, False) | Face(False, False, True)
        Face(vector_env=True, observations=True, actions=True)
    """

    vector_env: bool
    observations: bool  # the two observation spaces are Gymnasium's
    actions: bool  # the two action spaces are

    def __or__(self, other: object) -> Face:  # not tuple concatenation
        assert isinstance(other, Face)
        return Face(*(mine or theirs for mine, theirs in zip(self, other, strict=True)))


def face_of_arguments(autoreset_mode: Any, observation_mode: Any) -> Face:
    """The face a vector env's own arguments ask for: all of Gymnasium's, given its ``AutoresetMode`` or spaces."""
    given = brought_gymnasium(autoreset_mode, *(observation_mode if isinstance(observation_mode, tuple) else ()))
    return Face(given, given, given)


def face_of_env(env: Any) -> Face:
    """The face sub-env ``env`` asks for: Gymnasium's class if it or a space is Gymnasium's, and each such space.

    Example:
        >>> from vecspaces.envs import TinyEnv
        >>> face_of_env(TinyEnv())
        Face(vector_env=False, observations=False, actions=False)
    """
    observations, actions = brought_gymnasium(env.observation_space), brought_gymnasium(env.action_space)
    return Face(observations or actions or brought_gymnasium(env), observations, actions)


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
