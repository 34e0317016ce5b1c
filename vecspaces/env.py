"""A minimal environment base class with Gymnasium's signature, so examples and tests need no gymnasium.

The vector environments are duck-typed: any object with ``observation_space``, ``action_space``,
``reset(seed=, options=)``, ``step(action)`` and ``close()`` works, ``gymnasium.Env`` instances included.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, SupportsFloat, TypeVar

import numpy as np

from vecspaces._space import Space, make_rng

__all__ = ["Env"]

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")


class Env(Generic[ObsType, ActType]):
    """An environment: ``reset`` starts an episode, ``step`` advances it by one action.

    Subclasses set ``observation_space`` and ``action_space`` and implement ``step``; ``reset`` should call
    ``super().reset(seed=seed)`` so that ``np_random`` is seeded.

    Example:
        >>> from vecspaces.spaces import Box, Discrete
        >>> class Counter(Env):
        ...     observation_space = Box(0, 10, (1,))
        ...     action_space = Discrete(2)
        ...     def reset(self, *, seed=None, options=None):
        ...         super().reset(seed=seed)
        ...         self.count = 0
        ...         return np.array([0.0], np.float32), {}
        ...     def step(self, action):
        ...         self.count += int(action)
        ...         return np.array([self.count], np.float32), 1.0, self.count >= 10, False, {}
        >>> env = Counter()
        >>> env.reset(seed=0)[0], env.step(1)[0]
        (array([0.], dtype=float32), array([1.], dtype=float32))
    """

    # Not a ClassVar: as in Gymnasium, environments may also set their own metadata in __init__.
    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012
    render_mode: str | None = None
    spec: Any = None
    observation_space: Space[ObsType]
    action_space: Space[ActType]

    _np_random: np.random.Generator | None = None
    _np_random_seed: int | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Start a new episode; seeds ``np_random`` when ``seed`` is given.

        Args:
            seed: re-seeds ``np_random`` when given; None keeps the current generator (as in Gymnasium).
            options: environment-specific reset options; the base class ignores them.

        Returns:
            The first observation and an info dict (``(None, {})`` in the base class).

        Example:
            >>> env = Env()
            >>> _ = env.reset(seed=1)
            >>> first = env.np_random.random()
            >>> _ = env.reset(seed=1)
            >>> env.np_random.random() == first
            True
        """
        if seed is not None:
            self._np_random, self._np_random_seed = make_rng(seed)
        return None, {}  # type: ignore[return-value]  # subclasses return their observation

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Advance the episode by one action.

        Returns:
            ``(observation, reward, terminated, truncated, info)``.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def render(self) -> Any:
        """Render the environment; the base class renders nothing."""
        return None

    def close(self) -> None:
        """Release the environment's resources; the base class has none."""

    @property
    def np_random(self) -> np.random.Generator:
        """The environment's random generator, seeded from fresh entropy on first use.

        Example:
            >>> env = Env()
            >>> env.np_random.random() < 1.0
            True
        """
        if self._np_random is None:
            self._np_random, self._np_random_seed = make_rng()
        return self._np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        # The seed of a generator set from outside is unknown, which Gymnasium marks with -1.
        self._np_random = value
        self._np_random_seed = -1

    @property
    def np_random_seed(self) -> int:
        """The seed of ``np_random`` (created on first use), or -1 if ``np_random`` was set directly.

        Example:
            >>> env = Env()
            >>> _ = env.reset(seed=3)
            >>> env.np_random_seed
            3
        """
        if self._np_random_seed is None:
            self._np_random, self._np_random_seed = make_rng()
        return self._np_random_seed

    @property
    def unwrapped(self) -> Env[ObsType, ActType]:
        """The environment itself; wrappers return the environment they wrap."""
        return self

    def has_wrapper_attr(self, name: str) -> bool:
        """Whether the environment has the attribute ``name`` (there are no wrappers to look through)."""
        return hasattr(self, name)

    def get_wrapper_attr(self, name: str) -> Any:
        """Return the attribute ``name`` (Gymnasium's lookup through wrappers; there are none here).

        Example:
            >>> Env().get_wrapper_attr("render_mode") is None
            True
        """
        return getattr(self, name)

    def set_wrapper_attr(self, name: str, value: Any, *, force: bool = True) -> bool:
        """Set the attribute ``name``; with ``force=False`` only if it already exists.

        Returns:
            Whether the attribute was set.

        Example:
            >>> env = Env()
            >>> env.set_wrapper_attr("speed", 2), env.set_wrapper_attr("colour", "red", force=False)
            (True, False)
        """
        if force or hasattr(self, name):
            setattr(self, name, value)
            return True
        return False

    def __str__(self) -> str:
        if self.spec is None:
            return f"<{type(self).__name__} instance>"
        return f"<{type(self).__name__}<{self.spec.id}>>"

    def __enter__(self) -> Env[ObsType, ActType]:
        return self

    def __exit__(self, *exc_info: object) -> Literal[False]:
        self.close()
        return False  # never swallow the exception that left the block
