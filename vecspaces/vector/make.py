"""``make_vec`` over Gymnasium's registry, building vecspaces' vector envs; and the route from ``gymnasium.make_vec``.

Gymnasium is imported only when one of these functions runs: they read its registry and build its envs.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Sequence
from typing import Any

from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.vector.async_vector_env import AsyncVectorEnv
from vecspaces.vector.sync_vector_env import SyncVectorEnv
from vecspaces.vector.vector_env import VectorEnv

__all__ = ["make_vec", "register_vector_entry_point"]

_MODES = ("async", "sync", "vector_entry_point")


class _SubEnvFactory:
    """Builds one sub-env the way ``make_vec`` does: ``gymnasium.make`` of the spec, then the wrappers in order.

    A class rather than a closure, so that the workers receive it by reference to this module.
    """

    def __init__(self, spec: Any, kwargs: dict[str, Any], wrappers: Sequence[Callable[[Any], Any]]) -> None:
        self.spec = spec
        self.kwargs = kwargs
        self.wrappers = list(wrappers)

    def __call__(self) -> Any:
        import gymnasium

        env = gymnasium.make(self.spec, **self.kwargs)
        for wrapper in self.wrappers:
            env = wrapper(env)
        return env


def make_vec(
    id: Any,
    num_envs: int = 1,
    vectorization_mode: Any = None,
    vector_kwargs: dict[str, Any] | None = None,
    wrappers: Sequence[Callable[[Any], Any]] | None = None,
    **kwargs: Any,
) -> Any:
    """Create a vector env of a registered Gymnasium env, as ``gymnasium.make_vec`` does, on vecspaces' backends.

    The arguments and their meaning are ``gymnasium.make_vec``'s: ``"async"`` builds a vecspaces
    :class:`~vecspaces.vector.AsyncVectorEnv`, ``"sync"`` a :class:`~vecspaces.vector.SyncVectorEnv`, each over
    ``num_envs`` envs made by ``gymnasium.make`` and wrapped by ``wrappers`` in order; ``"vector_entry_point"``
    calls the spec's vector entry point; None picks the vector entry point when the spec has one, else
    ``"sync"``. The result's ``spec`` records how it was made, as Gymnasium's does, and since its sub-envs are
    Gymnasium's it is a ``gymnasium.vector.VectorEnv`` with Gymnasium's spaces.

    Args:
        id: a registered env id (``"module:Env-v0"`` imports ``module`` first) or an ``EnvSpec``.
        num_envs: how many sub-envs.
        vectorization_mode: ``"async"``, ``"sync"``, ``"vector_entry_point"``, a ``gymnasium.VectorizeMode``, or None.
        vector_kwargs: keyword arguments of the vector env class (e.g. ``num_workers`` or ``copy``).
        wrappers: callables applied to each sub-env in order (``"async"`` and ``"sync"`` only).
        **kwargs: keyword arguments of the sub-env, passed to ``gymnasium.make``.

    Returns:
        The vector env.

    Raises:
        ImportError: gymnasium is not installed.
        InvalidTypeError: ``id`` is neither a string nor an ``EnvSpec``.
        InvalidValueError: the mode is unknown, or does not fit the spec or the other arguments.

    Example:
        >>> envs = make_vec("CartPole-v1", num_envs=2, vectorization_mode="async", vector_kwargs={"num_workers": 1})
        >>> type(envs).__name__, envs.num_envs, envs.spec.kwargs["vectorization_mode"]
        ('AsyncVectorEnv', 2, 'async')
        >>> envs.close()
    """
    gymnasium = _import_gymnasium()
    vector_kwargs = {} if vector_kwargs is None else dict(vector_kwargs)
    wrappers = [] if wrappers is None else list(wrappers)
    spec = copy.deepcopy(_find_spec(id, gymnasium))
    # As in Gymnasium: a spec made by make_vec records its vector arguments in its kwargs, which win.
    env_kwargs = spec.kwargs
    spec.kwargs = {}
    num_envs = env_kwargs.pop("num_envs", num_envs)
    vectorization_mode = env_kwargs.pop("vectorization_mode", vectorization_mode)
    vector_kwargs = env_kwargs.pop("vector_kwargs", vector_kwargs)
    wrappers = env_kwargs.pop("wrappers", wrappers)
    env_kwargs.update(kwargs)
    mode = _mode(vectorization_mode, spec)

    if mode == "vector_entry_point":
        envs = _from_vector_entry_point(spec, num_envs, vector_kwargs, list(wrappers), env_kwargs, gymnasium)
    else:
        if spec.entry_point is None:
            raise InvalidValueError(
                message(
                    f"env {spec.id} cannot be vectorized with vectorization_mode={mode!r}",
                    expected="a spec with an entry point",
                    got="entry_point=None",
                )
            )
        factory = _SubEnvFactory(spec, env_kwargs, wrappers)
        vector_class = AsyncVectorEnv if mode == "async" else SyncVectorEnv
        envs = vector_class([factory] * num_envs, **vector_kwargs)

    made = copy.deepcopy(spec)
    made.kwargs = dict(env_kwargs)
    if num_envs != 1:
        made.kwargs["num_envs"] = num_envs
    made.kwargs["vectorization_mode"] = mode
    if vector_kwargs:
        made.kwargs["vector_kwargs"] = vector_kwargs
    if wrappers:
        made.kwargs["wrappers"] = wrappers
    envs.unwrapped.spec = made
    return envs


def register_vector_entry_point(env_id: str, vectorization_mode: str = "async", **vector_kwargs: Any) -> None:
    """Make ``gymnasium.make_vec(env_id, ...)`` build vecspaces' vector env, for code that calls Gymnasium's.

    Sets the vector entry point of ``env_id`` in Gymnasium's registry, so
    ``gymnasium.make_vec(env_id, num_envs, vectorization_mode="vector_entry_point")`` (or with no mode) returns a
    vecspaces vector env built with ``vector_kwargs``. The env's own keyword arguments still go through
    ``gymnasium.make_vec``.

    Args:
        env_id: a registered Gymnasium env id.
        vectorization_mode: ``"async"`` (vecspaces' AsyncVectorEnv) or ``"sync"``.
        **vector_kwargs: keyword arguments of the vector env class.

    Example:
        >>> import gymnasium
        >>> gymnasium.register("PendulumDoc-v1", entry_point="gymnasium.envs.classic_control:PendulumEnv")
        >>> register_vector_entry_point("PendulumDoc-v1", num_workers=1)
        >>> envs = gymnasium.make_vec("PendulumDoc-v1", 2)
        >>> type(envs).__name__, isinstance(envs, gymnasium.vector.VectorEnv)
        ('AsyncVectorEnv', True)
        >>> envs.close()
    """
    gymnasium = _import_gymnasium()
    spec = _find_spec(env_id, gymnasium)
    mode = _mode(vectorization_mode, spec)
    if mode == "vector_entry_point":
        raise InvalidValueError(
            message(
                "register_vector_entry_point needs a vecspaces backend",
                expected="vectorization_mode 'async' or 'sync'",
                got=repr(vectorization_mode),
            )
        )
    spec.vector_entry_point = _VectorEntryPoint(copy.deepcopy(spec), mode, vector_kwargs)


class _VectorEntryPoint:
    """What Gymnasium calls for ``vectorization_mode="vector_entry_point"``: ``(num_envs, **env kwargs)``."""

    def __init__(self, spec: Any, mode: str, vector_kwargs: dict[str, Any]) -> None:
        spec.vector_entry_point = None  # the copy builds sub-envs only, never this entry point again
        self.spec = spec
        self.mode = mode
        self.vector_kwargs = vector_kwargs

    def __call__(self, num_envs: int = 1, **kwargs: Any) -> VectorEnv[Any, Any, Any]:
        envs: VectorEnv[Any, Any, Any] = make_vec(
            self.spec, num_envs, self.mode, vector_kwargs=self.vector_kwargs, **kwargs
        )
        return envs


def _import_gymnasium() -> Any:
    try:
        import gymnasium
    except ImportError as error:
        raise ImportError(
            message(
                "make_vec needs gymnasium, which cannot be imported",
                expected="an installed gymnasium package",
                got=str(error),
                fix='pip install "vecspaces[gymnasium]"',
            )
        ) from error
    return gymnasium


def _find_spec(id: Any, gymnasium: Any) -> Any:
    """The registered spec of ``id``; ``"module:Env-v0"`` imports ``module`` first, which registers its envs."""
    if isinstance(id, gymnasium.envs.registration.EnvSpec):
        return id
    if not isinstance(id, str):
        raise InvalidTypeError(
            message("make_vec id is invalid", expected="a registered env id (str) or an EnvSpec", got=show(id))
        )
    module, _, env_name = id.rpartition(":")
    if module:
        importlib.import_module(module)
    return gymnasium.spec(env_name)


def _mode(vectorization_mode: Any, spec: Any) -> str:
    """The mode's string value; None picks the spec's vector entry point if it has one, else ``"sync"``."""
    if vectorization_mode is None:
        return "vector_entry_point" if spec.vector_entry_point is not None else "sync"
    value = getattr(vectorization_mode, "value", vectorization_mode)
    if value not in _MODES:
        raise InvalidValueError(
            message(
                "vectorization_mode is invalid",
                expected=f"None, a gymnasium.VectorizeMode or one of {', '.join(map(repr, _MODES))}",
                got=show(vectorization_mode),
            )
        )
    return str(value)


def _from_vector_entry_point(
    spec: Any,
    num_envs: int,
    vector_kwargs: dict[str, Any],
    wrappers: list[Callable[[Any], Any]],
    env_kwargs: dict[str, Any],
    gymnasium: Any,
) -> Any:
    """Build the vector env with the spec's own vector entry point, as Gymnasium does."""
    unfit = (
        ("vector_kwargs", vector_kwargs, "pass the vector env's arguments as keyword arguments"),
        ("wrappers", wrappers, "use vectorization_mode='async' or 'sync' to wrap each sub-env"),
        ("the spec's additional_wrappers", spec.additional_wrappers, "use vectorization_mode='async' or 'sync'"),
    )
    for name, value, fix in unfit:
        if value:
            raise InvalidValueError(
                message(
                    f"vectorization_mode='vector_entry_point' cannot take {name}",
                    expected="none",
                    got=show(value),
                    fix=fix,
                )
            )
    creator = spec.vector_entry_point
    if creator is None:
        raise InvalidValueError(
            message(
                f"env {spec.id} has no vector entry point",
                expected="a spec with vector_entry_point set",
                got="vector_entry_point=None",
                fix="use vectorization_mode='async' or 'sync'",
            )
        )
    if not callable(creator):
        creator = gymnasium.envs.registration.load_env_creator(creator)
    if spec.max_episode_steps is not None and "max_episode_steps" not in env_kwargs:
        env_kwargs["max_episode_steps"] = spec.max_episode_steps
    return creator(num_envs=num_envs, **env_kwargs)
