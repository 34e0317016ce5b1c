"""vecspaces envs seen by Gymnasium as ``gymnasium.Env``: :func:`as_gymnasium_env`.

A vecspaces env (:class:`vecspaces.Env`, or any duck-typed env) is not a ``gymnasium.Env``, so Gymnasium's
``check_env``, its wrappers (``TimeLimit``...) and its own vector envs refuse it. :func:`as_gymnasium_env`
gives it a Gymnasium face, :class:`GymnasiumEnv`: a ``gymnasium.Env`` whose spaces are the Gymnasium forms
of the env's spaces (converted once, at construction) and whose every call goes to the env itself, so there
is one source of truth for the episode, the random generator, ``metadata``, ``render_mode`` and ``spec``.
"""

from __future__ import annotations

from typing import Any, SupportsFloat, TypeVar

import numpy as np

from vecspaces._ops.gymnasium import convert_to_gymnasium
from vecspaces.error import InvalidTypeError, message, show
from vecspaces.spaces import Dict, Graph, OneOf, Sequence, Tuple
from vecspaces.spaces import GraphInstance as VecspacesGraphInstance
from vecspaces.vector._runner import ENV_ATTRIBUTES  # what makes an env, as for the vector envs: duck typing

try:
    import gymnasium
except ImportError as _error:  # the rest of vecspaces works without gymnasium; this module is its interop
    raise ImportError(
        message(
            "vecspaces.gymnasium needs gymnasium, which cannot be imported",
            expected="an installed gymnasium package",
            got=str(_error),
            fix="pip install gymnasium",
        )
    ) from _error

__all__ = ["GymnasiumEnv", "as_gymnasium_env"]

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")

_EXPECTED = (
    "an env: an object with observation_space, action_space, reset, step and close, such as a vecspaces.Env "
    "(a gymnasium.Env is returned unchanged)"
)


def as_gymnasium_env(env: Any) -> gymnasium.Env[Any, Any]:
    """Return ``env`` as a ``gymnasium.Env``, so Gymnasium's ``check_env``, wrappers and vector envs accept it.

    A vecspaces env (or any object with ``observation_space``, ``action_space``, ``reset``, ``step`` and
    ``close``) gets a :class:`GymnasiumEnv` around it; a ``gymnasium.Env`` (wrappers and adapters included) is
    returned unchanged, so the call is safe to repeat.

    Args:
        env: the env to adapt.

    Returns:
        A ``gymnasium.Env`` whose spaces are ``gymnasium.spaces`` objects and whose calls go to ``env``.

    Raises:
        InvalidTypeError: ``env`` is not an env (a class instead of an instance, a vector env, an object
            missing one of the five attributes) or one of its spaces is not a space.
        CustomSpaceError: a space of ``env`` is of a custom kind with no Gymnasium counterpart.

    Example:
        >>> import gymnasium
        >>> from vecspaces.envs import TinyEnv
        >>> env = gymnasium.wrappers.TimeLimit(as_gymnasium_env(TinyEnv()), max_episode_steps=2)
        >>> _ = env.reset(seed=0)
        >>> env.step(0)[3], env.step(0)[3], env.observation_space
        (False, True, Box(-1.0, 1.0, (4,), float32))
    """
    if isinstance(env, gymnasium.Env):
        return env
    problem = _env_problem(env)
    if problem is not None:
        constraint, fix = problem
        raise InvalidTypeError(
            message(f"as_gymnasium_env env {constraint}", expected=_EXPECTED, got=_describe(env), fix=fix)
        )
    return GymnasiumEnv(env)


def _env_problem(env: Any) -> tuple[str, str] | None:
    """What keeps ``env`` from being adapted, as (the broken constraint, the fix or ""), or None."""
    if isinstance(env, type):
        return "is a class", f"pass an instance, e.g. as_gymnasium_env({env.__name__}())"
    if _is_vector_env(env):
        return "is a vector env", "adapt each sub-env instead: [lambda: as_gymnasium_env(make_env()) for _ in range(n)]"
    missing = [name for name in ENV_ATTRIBUTES if not hasattr(env, name)]
    if missing:
        return f"lacks {', '.join(missing)}", ""
    not_callable = [name for name in ("reset", "step", "close") if not callable(getattr(env, name))]
    if not_callable:
        return f"{', '.join(not_callable)} cannot be called", ""
    return None


def _describe(env: Any) -> str:
    return repr(env) if isinstance(env, type) else show(env)


def _is_vector_env(env: Any) -> bool:
    from vecspaces.vector import VectorEnv

    return isinstance(env, (VectorEnv, gymnasium.vector.VectorEnv))


class GymnasiumEnv(gymnasium.Env[ObsType, ActType]):
    """A ``gymnasium.Env`` that is the Gymnasium face of a vecspaces env; made by :func:`as_gymnasium_env`.

    ``observation_space`` and ``action_space`` are the Gymnasium forms of the env's spaces, converted once
    here: seeding or sampling them does not touch the env's own spaces. ``reset``, ``step``, ``render`` and
    ``close`` call the env; ``np_random``, ``np_random_seed`` and the generator Gymnasium's checker reads
    (``_np_random``) are the env's, so seeding and determinism are the env's own (a seeded ``reset`` re-seeds
    the env, ``reset()`` keeps its generator running); ``metadata``, ``render_mode`` and ``spec`` are read
    from and written to the env, so ``gymnasium.make`` setting ``spec`` sets it on the env.

    ``unwrapped`` is this adapter, not the vecspaces env, because Gymnasium code relies on ``unwrapped``
    being a ``gymnasium.Env`` with the Gymnasium spaces: ``check_env`` warns when an env is not its own
    ``unwrapped`` and reads ``env.unwrapped._np_random``, ``gymnasium.make`` sets ``env.unwrapped.spec``, and
    user code compares ``env.unwrapped.observation_space`` with Gymnasium spaces. The vecspaces env is
    ``.env``, as under a Gymnasium wrapper; its own attributes are also found by Gymnasium's
    ``get_wrapper_attr``, ``has_wrapper_attr`` and ``set_wrapper_attr`` (which a vector env's ``get_attr``
    and ``set_attr`` use), looking at the adapter first, then at the env. There is no ``__getattr__``
    forwarding, as for Gymnasium's wrappers since 1.0.

    Observations and actions pass through unchanged (both libraries use numpy arrays, dicts and tuples);
    only a space holding a Graph needs its graphs converted, each ``GraphInstance`` to the other library's.

    Args:
        env: the vecspaces env (any object with ``observation_space``, ``action_space``, ``reset``, ``step``
            and ``close``).

    Example:
        >>> from vecspaces.envs import DictEnv
        >>> env = GymnasiumEnv(DictEnv())
        >>> obs, info = env.reset(seed=1)
        >>> obs in env.observation_space, env.np_random_seed, env.unwrapped is env, type(env.env).__name__
        (True, 1, True, 'DictEnv')
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.observation_space = convert_to_gymnasium(
            env.observation_space, "as_gymnasium_env", "env.observation_space"
        )
        self.action_space = convert_to_gymnasium(env.action_space, "as_gymnasium_env", "env.action_space")
        # Decided once: only spaces that hold a Graph have values that differ between the libraries.
        self._graph_observations = _holds_graph(env.observation_space)
        self._graph_actions = _holds_graph(env.action_space)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Reset the env; a ``seed`` re-seeds its generator, as ``gymnasium.Env.reset`` does.

        Example:
            >>> from vecspaces.envs import TinyEnv
            >>> env = as_gymnasium_env(TinyEnv())
            >>> bool((env.reset(seed=4)[0] == env.reset(seed=4)[0]).all())
            True
        """
        observation, info = self.env.reset(seed=seed, options=options)
        if self._graph_observations:
            observation = _swap_graphs(observation, VecspacesGraphInstance, gymnasium.spaces.GraphInstance)
        return observation, info

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env with ``action``: ``(observation, reward, terminated, truncated, info)``.

        Example:
            >>> from vecspaces.envs import TinyEnv
            >>> env = as_gymnasium_env(TinyEnv(episode_length=1))
            >>> _ = env.reset(seed=0)
            >>> env.step(env.action_space.sample())[1:4]
            (1.0, False, True)
        """
        if self._graph_actions:
            action = _swap_graphs(action, gymnasium.spaces.GraphInstance, VecspacesGraphInstance)
        if not self._graph_observations:
            return self.env.step(action)
        observation, reward, terminated, truncated, info = self.env.step(action)
        observation = _swap_graphs(observation, VecspacesGraphInstance, gymnasium.spaces.GraphInstance)
        return observation, reward, terminated, truncated, info

    def render(self) -> Any:
        """Render the env (what its ``render_mode`` says)."""
        return self.env.render() if hasattr(self.env, "render") else None

    def close(self) -> None:
        """Close the env."""
        self.env.close()

    # Random generator: the env's, under every name Gymnasium reads.

    @property
    def np_random(self) -> np.random.Generator:
        """The env's random generator."""
        generator: np.random.Generator = self.env.np_random
        return generator

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self.env.np_random = value

    @property
    def np_random_seed(self) -> int:
        """The seed of the env's generator (-1 if it was set directly)."""
        seed: int = self.env.np_random_seed
        return seed

    @property  # an attribute in gymnasium.Env: here the env's, read each time
    def _np_random(self) -> np.random.Generator | None:
        # Gymnasium's checker and seeding tests read this private name of ``unwrapped``; None until seeded.
        return getattr(self.env, "_np_random", None)

    @_np_random.setter
    def _np_random(self, value: np.random.Generator | None) -> None:
        self.env._np_random = value

    # Metadata: the env's, read and written through.

    @property
    def metadata(self) -> dict[str, Any]:
        """The env's metadata (``{"render_modes": []}`` for an env without any)."""
        metadata: dict[str, Any] = getattr(self.env, "metadata", {"render_modes": []})
        return metadata

    @metadata.setter
    def metadata(self, value: dict[str, Any]) -> None:
        self.env.metadata = value

    @property
    def render_mode(self) -> str | None:
        """The env's render mode."""
        mode: str | None = getattr(self.env, "render_mode", None)
        return mode

    @render_mode.setter
    def render_mode(self, value: str | None) -> None:
        self.env.render_mode = value

    @property
    def spec(self) -> Any:
        """The env's ``EnvSpec`` (set by ``gymnasium.make``), or None."""
        return getattr(self.env, "spec", None)

    @spec.setter
    def spec(self, value: Any) -> None:
        self.env.spec = value

    # Gymnasium's attribute lookup through wrappers continues into the env.

    def has_wrapper_attr(self, name: str) -> bool:
        """Whether the adapter or the env has the attribute ``name``.

        Example:
            >>> from vecspaces.envs import TinyEnv
            >>> env = as_gymnasium_env(TinyEnv())
            >>> env.has_wrapper_attr("episode_length"), env.has_wrapper_attr("colour")
            (True, False)
        """
        return hasattr(self, name) or hasattr(self.env, name)

    def get_wrapper_attr(self, name: str) -> Any:
        """The attribute ``name`` of the adapter, or else of the env.

        Raises:
            AttributeError: neither has it.

        Example:
            >>> from vecspaces.envs import TinyEnv
            >>> as_gymnasium_env(TinyEnv(episode_length=7)).get_wrapper_attr("episode_length")
            7
        """
        if hasattr(self, name):
            return getattr(self, name)
        try:
            return getattr(self.env, name)
        except AttributeError as error:
            raise AttributeError(
                message(
                    f"{self} has no attribute {name!r}",
                    expected="an attribute of the adapter or of its env",
                    got=f"neither {type(self).__name__} nor {type(self.env).__name__} has it",
                )
            ) from error

    def set_wrapper_attr(self, name: str, value: Any, *, force: bool = True) -> bool:
        """Set ``name`` where it exists (the adapter first, then the env); with ``force``, create it on the env.

        A new attribute goes to the env, not the adapter, so that the env's own code sees it (a vector env's
        ``set_attr`` ends here).

        Returns:
            Whether the attribute was set.

        Example:
            >>> from vecspaces.envs import TinyEnv
            >>> env = as_gymnasium_env(TinyEnv())
            >>> env.set_wrapper_attr("episode_length", 3), env.env.episode_length
            (True, 3)
            >>> env.set_wrapper_attr("colour", "red", force=False), hasattr(env.env, "colour")
            (False, False)
        """
        if hasattr(self, name):
            setattr(self, name, value)
        elif force or hasattr(self.env, name):
            setattr(self.env, name, value)
        else:
            return False
        return True

    def __str__(self) -> str:
        return f"<{type(self).__name__}{self.env}>"

    def __repr__(self) -> str:
        return str(self)


def _holds_graph(space: Any) -> bool:
    """Whether a Graph is anywhere in ``space`` (a vecspaces space, or anything else: False)."""
    if isinstance(space, Graph):
        return True
    if isinstance(space, (Dict, Tuple, OneOf)):
        children = space.spaces.values() if isinstance(space, Dict) else space.spaces
        return any(_holds_graph(child) for child in children)
    if isinstance(space, Sequence):
        return _holds_graph(space.feature_space)
    return False


def _swap_graphs(value: Any, source: type[tuple[Any, ...]], target: type[tuple[Any, ...]]) -> Any:
    """``value`` with every ``source`` GraphInstance (nested in dicts, tuples and lists too) made a ``target``."""
    if isinstance(value, source):  # checked before tuple: a GraphInstance is a named tuple
        return target(*(_swap_graphs(part, source, target) for part in value))
    if type(value) is dict:
        return {key: _swap_graphs(item, source, target) for key, item in value.items()}
    if type(value) in (tuple, list):
        return type(value)(_swap_graphs(item, source, target) for item in value)
    return value
