"""Base classes of wrappers around a vector env: :class:`VectorWrapper` and its observation, action and reward forms.

A wrapper holds the vector env it wraps (``env``) and passes every call and attribute on to it, so a subclass
overrides only what it changes. Spaces and ``metadata`` assigned to a wrapper are its own; until then they
are the wrapped env's.

The wrapped env may be a vecspaces vector env or a Gymnasium one. Around an env that shows Gymnasium's types
(``gymnasium.vector.VectorEnv``, which every vecspaces vector env is for a user who brought Gymnasium, see
``vecspaces.vector._gymnasium_facing``) the wrapper is also a ``gymnasium.vector.VectorWrapper``, so
Gymnasium's own wrappers can be stacked on it.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.vector._gymnasium_facing import gymnasium_facing
from vecspaces.vector.vector_env import ActType, ArrayType, AutoresetMode, ObsType, VectorEnv

__all__ = ["VectorActionWrapper", "VectorObservationWrapper", "VectorRewardWrapper", "VectorWrapper"]

WrapperObsType = TypeVar("WrapperObsType")
WrapperActType = TypeVar("WrapperActType")

StepResult = tuple[Any, Any, npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]


class _OwnOrWrapped:
    """An attribute of a wrapper: its own value once one is assigned, else the wrapped env's attribute."""

    def __init__(self, what: str) -> None:
        self.__doc__ = f"{what[0].upper()}{what[1:]}: the wrapper's own once assigned, else the wrapped env's."

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, wrapper: Any, owner: type | None = None) -> Any:
        if wrapper is None:
            return self
        own = wrapper.__dict__.get(self.name)
        return getattr(wrapper.env, self.name) if own is None else own

    def __set__(self, wrapper: Any, value: Any) -> None:
        wrapper.__dict__[self.name] = value


class VectorWrapper(
    VectorEnv[WrapperObsType, WrapperActType, ArrayType],
    Generic[WrapperObsType, WrapperActType, ObsType, ActType, ArrayType],
):
    """A vector env that wraps another one and passes everything on to it; subclasses change a part.

    Call ``super().__init__(env)`` from a subclass's ``__init__``.

    Args:
        env: the vector env to wrap (vecspaces' or Gymnasium's).

    Raises:
        InvalidTypeError: ``env`` is not a vector env.

    Example:
        >>> from vecspaces.envs import TinyEnv
        >>> from vecspaces.vector import SyncVectorEnv, VectorWrapper
        >>> class CountSteps(VectorWrapper):
        ...     steps = 0
        ...     def step(self, actions):
        ...         self.steps += 1
        ...         return self.env.step(actions)
        >>> envs = CountSteps(SyncVectorEnv([TinyEnv, TinyEnv]))
        >>> _ = envs.reset(seed=0)
        >>> _ = envs.step(envs.action_space.sample())
        >>> envs.steps, envs.num_envs, envs.unwrapped is envs.env
        (1, 2, True)
        >>> envs.close()
    """

    _faces_gymnasium_by_arguments = True  # as the env it wraps

    def __init__(self, env: Any) -> None:
        gymnasium = sys.modules.get("gymnasium")
        gymnasium_env = gymnasium is not None and isinstance(env, gymnasium.vector.VectorEnv)
        if not (gymnasium_env or isinstance(env, VectorEnv)):
            raise InvalidTypeError(
                message(
                    f"{type(self).__name__} can only wrap a vector env",
                    expected="a vecspaces.vector.VectorEnv or a gymnasium.vector.VectorEnv",
                    got=show(env),
                    fix="wrap single envs with Gymnasium's wrappers before vectorising them",
                )
            )
        self.env = env
        if gymnasium_env:
            self.__class__ = gymnasium_facing(type(self), "VectorWrapper")

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[WrapperObsType, dict[str, Any]]:
        """Reset the wrapped env."""
        result: tuple[WrapperObsType, dict[str, Any]] = self.env.reset(seed=seed, options=options)
        return result

    def step(self, actions: WrapperActType) -> StepResult:
        """Step the wrapped env."""
        result: StepResult = self.env.step(actions)
        return result

    def render(self) -> tuple[Any, ...] | None:
        """The wrapped env's frames."""
        frames: tuple[Any, ...] | None = self.env.render()
        return frames

    def close(self, **kwargs: Any) -> None:
        """Close the wrapped env."""
        self.env.close(**kwargs)

    def close_extras(self, **kwargs: Any) -> None:
        """Release what the wrapped env holds beyond its sub-envs."""
        self.env.close_extras(**kwargs)

    @property
    def unwrapped(self) -> Any:
        """The vector env under every wrapper."""
        return self.env.unwrapped

    @property
    def num_envs(self) -> int:  # type: ignore[override]  # read from the wrapped env
        """The wrapped env's number of sub-envs."""
        count: int = self.env.num_envs
        return count

    observation_space: Any = _OwnOrWrapped("the batched observation space")
    action_space: Any = _OwnOrWrapped("the batched action space")
    single_observation_space: Any = _OwnOrWrapped("one sub-env's observation space")
    single_action_space: Any = _OwnOrWrapped("one sub-env's action space")
    metadata: Any = _OwnOrWrapped("the metadata")

    @property
    def np_random(self) -> Any:
        """The wrapped env's ``np_random``."""
        return self.env.np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self.env.np_random = value

    @property
    def np_random_seed(self) -> Any:
        """The wrapped env's ``np_random_seed``."""
        return self.env.np_random_seed

    @property
    def spec(self) -> Any:
        """The wrapped env's ``spec``."""
        return self.env.spec

    @property
    def render_mode(self) -> str | None:  # type: ignore[override]
        """The wrapped env's ``render_mode``."""
        mode: str | None = self.env.render_mode
        return mode

    @property
    def closed(self) -> bool:
        """Whether the wrapped env is closed."""
        return bool(self.env.closed)

    @closed.setter
    def closed(self, value: bool) -> None:
        self.env.closed = value

    def __repr__(self) -> str:
        return f"<{type(self).__name__}, {self.env}>"


class VectorObservationWrapper(VectorWrapper[WrapperObsType, ActType, ObsType, ActType, ArrayType]):
    """A wrapper that transforms the batched observations of ``reset`` and ``step`` with :meth:`observations`.

    The wrapped env must not autoreset in the same step (``AutoresetMode.SAME_STEP``): the final observations
    it puts in the infos would escape the transformation.

    Raises:
        InvalidValueError: the wrapped env autoresets in the same step.

    Example:
        >>> from vecspaces.envs import TinyEnv
        >>> from vecspaces.vector import SyncVectorEnv, VectorObservationWrapper
        >>> class Doubled(VectorObservationWrapper):
        ...     def observations(self, observations):
        ...         return observations * 2
        >>> envs = Doubled(SyncVectorEnv([TinyEnv, TinyEnv]))
        >>> observations, _ = envs.reset(seed=0)
        >>> bool((observations == 2 * envs.env.reset(seed=0)[0]).all())
        True
        >>> envs.close()
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        mode = env.metadata.get("autoreset_mode")
        if mode is None:
            warnings.warn(
                f"{env} has no metadata['autoreset_mode']; {type(self).__name__} assumes it does not reset an env in "
                "the step that ends its episode (the final observation in the infos would not be transformed)",
                UserWarning,
                stacklevel=2,
            )
        elif mode == AutoresetMode.SAME_STEP:
            raise InvalidValueError(
                message(
                    f"{type(self).__name__} cannot wrap an env that autoresets in the same step",
                    expected="autoreset_mode NEXT_STEP or DISABLED",
                    got=show(mode),
                    fix="the final observations in its infos would escape observations(); build the vector env "
                    "with autoreset_mode=AutoresetMode.NEXT_STEP",
                )
            )

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[WrapperObsType, dict[str, Any]]:
        """Reset the wrapped env and transform its observations."""
        observations, infos = self.env.reset(seed=seed, options=options)
        return self.observations(observations), infos

    def step(self, actions: ActType) -> StepResult:
        """Step the wrapped env and transform its observations."""
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return self.observations(observations), rewards, terminations, truncations, infos

    def observations(self, observations: ObsType) -> WrapperObsType:
        """The transformed batch of observations (subclasses implement this)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement observations()")


class VectorActionWrapper(VectorWrapper[ObsType, WrapperActType, ObsType, ActType, ArrayType]):
    """A wrapper that transforms the batched actions with :meth:`actions` before stepping the wrapped env.

    Example:
        >>> import numpy as np
        >>> from vecspaces.envs import TinyEnv
        >>> from vecspaces.vector import SyncVectorEnv, VectorActionWrapper
        >>> class FirstAction(VectorActionWrapper):
        ...     def actions(self, actions):
        ...         return np.zeros_like(actions)
        >>> envs = FirstAction(SyncVectorEnv([TinyEnv, TinyEnv]))
        >>> _ = envs.reset(seed=0)
        >>> _ = envs.step(envs.action_space.sample())
        >>> envs.close()
    """

    def step(self, actions: WrapperActType) -> StepResult:
        """Step the wrapped env with the transformed actions."""
        result: StepResult = self.env.step(self.actions(actions))
        return result

    def actions(self, actions: WrapperActType) -> ActType:
        """The transformed batch of actions (subclasses implement this)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement actions()")


class VectorRewardWrapper(VectorWrapper[ObsType, ActType, ObsType, ActType, ArrayType]):
    """A wrapper that transforms the batched rewards of ``step`` with :meth:`rewards`.

    Example:
        >>> from vecspaces.envs import TinyEnv
        >>> from vecspaces.vector import SyncVectorEnv, VectorRewardWrapper
        >>> class Negated(VectorRewardWrapper):
        ...     def rewards(self, rewards):
        ...         return -rewards
        >>> envs = Negated(SyncVectorEnv([TinyEnv, TinyEnv]))
        >>> _ = envs.reset(seed=0)
        >>> actions = envs.action_space.sample()
        >>> bool((envs.step(actions)[1] <= 0).all())
        True
        >>> envs.close()
    """

    def step(self, actions: ActType) -> StepResult:
        """Step the wrapped env and transform its rewards."""
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return observations, self.rewards(rewards), terminations, truncations, infos

    def rewards(self, rewards: ArrayType) -> ArrayType:
        """The transformed batch of rewards (subclasses implement this)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rewards()")
