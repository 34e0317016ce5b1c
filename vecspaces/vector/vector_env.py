"""The :class:`VectorEnv` base class and :class:`AutoresetMode`."""

from __future__ import annotations

import sys
from dataclasses import replace
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from vecspaces.error import InvalidValueError, message, show
from vecspaces.spaces import to_gymnasium
from vecspaces.spaces.space import Space, make_rng
from vecspaces.vector._gymnasium_facing import Face, face_of_env, gymnasium_facing
from vecspaces.vector.infos import add_info

if TYPE_CHECKING:
    from vecspaces.vector._spaces import VectorSpaces

__all__ = ["AutoresetMode", "SubEnvsVectorEnv", "VectorEnv", "autoreset_mode_of"]

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")
ArrayType = TypeVar("ArrayType")


class AutoresetMode(Enum):
    """When a vector env resets a sub-env whose episode ended.

    ``NEXT_STEP``: the step that ends the episode returns the final observation; the next ``step`` ignores its
    action for that env, resets it and returns the first observation with reward 0 and both flags False.
    ``SAME_STEP``: the step that ends the episode resets the env at once and returns the first observation of
    the next episode; the final observation and info are in ``info["final_obs"]`` and ``info["final_info"]``.
    ``DISABLED``: nothing is reset automatically; reset ended envs with
    ``reset(options={"reset_mask": mask})``. Stepping an ended env is an error.
    """

    NEXT_STEP = "NextStep"
    SAME_STEP = "SameStep"
    DISABLED = "Disabled"

    def __eq__(self, other: object) -> bool:
        # Equal to Gymnasium's member of the same name too, from either side: Gymnasium's enum has no __eq__ of
        # its own, so Python asks this one when Gymnasium's is on the left.
        if isinstance(other, Enum) and type(other).__name__ == "AutoresetMode":
            return self.value == other.value
        return NotImplemented

    __hash__ = Enum.__hash__  # the member's name, as for Gymnasium's members, so equal members hash alike


def autoreset_mode_of(mode: Any) -> AutoresetMode:
    """The :class:`AutoresetMode` that ``mode`` names: a member of it or of Gymnasium's enum, or a string value.

    Raises:
        InvalidValueError: ``mode`` names no autoreset mode.

    Example:
        >>> autoreset_mode_of("SameStep")
        <AutoresetMode.SAME_STEP: 'SameStep'>
    """
    if isinstance(mode, AutoresetMode):
        return mode
    value = mode.value if isinstance(mode, Enum) and type(mode).__name__ == "AutoresetMode" else mode
    for member in AutoresetMode:
        if member.value == value:
            return member
    names = ", ".join(f"AutoresetMode.{member.name}" for member in AutoresetMode)
    values = ", ".join(repr(member.value) for member in AutoresetMode)
    raise InvalidValueError(
        message(
            "autoreset_mode is invalid",
            expected=f"{names} (vecspaces' or Gymnasium's) or one of their values {values}",
            got=show(mode),
        )
    )


class VectorEnv(Generic[ObsType, ActType, ArrayType]):
    """Base class of vector environments: ``num_envs`` sub-environments stepped as one batch.

    Subclasses set ``num_envs``, ``observation_space``, ``action_space``, ``single_observation_space`` and
    ``single_action_space`` and implement ``reset``, ``step`` and ``close_extras``. A vector env of your own on
    this base is also a ``gymnasium.vector.VectorEnv`` when gymnasium is imported, so Gymnasium's wrappers take
    it; vecspaces' own vector envs and wrappers decide that in their constructors, from what they are given.

    Attributes:
        metadata: the sub-envs' metadata plus ``"autoreset_mode"``.
        closed: whether :meth:`close` has run.
    """

    _faces_gymnasium_by_arguments: ClassVar[bool] = False  # True where the constructor decides the face

    metadata: dict[str, Any] = {}  # noqa: RUF012  (Gymnasium's class-level default; instances replace it)
    render_mode: str | None = None
    spec: Any = None
    closed: bool = False
    num_envs: int
    observation_space: Space[Any]
    action_space: Space[Any]
    single_observation_space: Space[Any]
    single_action_space: Space[Any]

    _np_random: np.random.Generator | None = None
    _np_random_seed: int | None = None
    _face: Face  # what it shows of Gymnasium, set with its spaces (a Ray agent reports its local env's)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """An instance of ``cls``, or of its Gymnasium-facing subclass (see the class docstring)."""
        if not cls._faces_gymnasium_by_arguments and "gymnasium" in sys.modules:
            cls = gymnasium_facing(cls)
        return super().__new__(cls)

    def _show_spaces(self, spaces: VectorSpaces, face: Face) -> None:
        """Set the four public spaces and ``metadata["autoreset_mode"]``, as Gymnasium's types where ``face`` says.

        With ``face.vector_env`` the env becomes an instance of its Gymnasium-facing subclass (see
        ``vecspaces.vector._gymnasium_facing``); the observation or action spaces ``face`` names are converted
        once here.
        """
        self._face = face
        if face.vector_env:
            import gymnasium

            self.__class__ = gymnasium_facing(type(self))
            self.metadata["autoreset_mode"] = gymnasium.vector.AutoresetMode(self.metadata["autoreset_mode"].value)
        if face.observations:
            spaces = replace(
                spaces,
                single_observation_space=to_gymnasium(spaces.single_observation_space),
                observation_space=to_gymnasium(spaces.observation_space),
            )
        if face.actions:
            spaces = replace(
                spaces,
                single_action_space=to_gymnasium(spaces.single_action_space),
                action_space=to_gymnasium(spaces.action_space),
            )
        self.single_observation_space = spaces.single_observation_space
        self.observation_space = spaces.observation_space
        self.single_action_space = spaces.single_action_space
        self.action_space = spaces.action_space

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Reset every sub-env (or those in ``options["reset_mask"]``) and return the batched observation."""
        raise NotImplementedError(f"{type(self).__name__} does not implement reset()")

    def step(
        self, actions: ActType
    ) -> tuple[ObsType, ArrayType, npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """Step every sub-env with its action and return the batched results."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def render(self) -> tuple[Any, ...] | None:
        """Return the sub-envs' rendered frames."""
        raise NotImplementedError(f"{type(self).__name__} does not implement render()")

    def close(self, **kwargs: Any) -> None:
        """Close the sub-envs and release every resource. Safe to call more than once."""
        if self.closed:
            return
        # Mark closed first: if teardown fails half-way, __del__ must not try again at interpreter exit.
        self.closed = True
        self.close_extras(**kwargs)

    def close_extras(self, **kwargs: Any) -> None:
        """Release what the subclass holds (sub-envs, processes, buffers)."""

    def _add_info(self, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int) -> dict[str, Any]:
        """Merge sub-env ``env_num``'s info into the batched infos (see :func:`vecspaces.vector.infos.add_info`).

        Vector envs written against Gymnasium's base class build their infos with this method.
        """
        return add_info(vector_infos, env_info, env_num, self.num_envs)

    @property
    def np_random(self) -> np.random.Generator:
        """A random generator of the vector env itself (not of its sub-envs)."""
        if self._np_random is None:
            self._np_random, self._np_random_seed = make_rng()
        return self._np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._np_random = value
        self._np_random_seed = -1

    @property
    def np_random_seed(self) -> int | None:
        """The seed of :attr:`np_random`, -1 if it was set directly, None if never created."""
        return self._np_random_seed

    @property
    def unwrapped(self) -> VectorEnv[ObsType, ActType, ArrayType]:
        """The vector env itself (wrappers return the env they wrap)."""
        return self

    def __enter__(self) -> VectorEnv[ObsType, ActType, ArrayType]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        # At interpreter exit modules may already be torn down; closing then only produces noise. A constructor
        # that failed half-way leaves closed=True, so there is nothing to do either.
        if self.__dict__.get("closed", True) is False and not sys.is_finalizing():
            self.close(terminate=True)

    def __repr__(self) -> str:
        num_envs = getattr(self, "num_envs", "?")
        return f"{type(self).__name__}(num_envs={num_envs})"


class SubEnvsVectorEnv(VectorEnv[ObsType, ActType, ArrayType]):
    """Base of the vector envs that hold sub-env objects (both built-in backends): their generators are the sub-envs'.

    As in Gymnasium, ``np_random`` and ``np_random_seed`` give one value per sub-env.
    """

    _faces_gymnasium_by_arguments = True

    autoreset_mode: AutoresetMode

    def _show_spaces(self, spaces: VectorSpaces, face: Face) -> None:
        super()._show_spaces(spaces, face)
        # Gymnasium's member where the env faces Gymnasium, for code that compares modes with `is` (vecspaces'
        # members equal and hash alike, but are other objects).
        self.autoreset_mode = self.metadata["autoreset_mode"]

    def _read_first_env(self, env: Any, arguments: Face) -> Face:
        """Take ``metadata`` and ``render_mode`` from the first sub-env; return the face to show (see ``Face``).

        Args:
            env: the first sub-env.
            arguments: the face the constructor's own arguments ask for.
        """
        self.metadata = dict(getattr(env, "metadata", {}))
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = getattr(env, "render_mode", None)
        return arguments | face_of_env(env)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each sub-env's attribute ``name``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement get_attr()")

    @property
    def np_random_seed(self) -> tuple[Any, ...]:  # type: ignore[override]  # one per sub-env, as Gymnasium
        """Each sub-env's ``np_random_seed``."""
        return self.get_attr("np_random_seed")

    @property  # type: ignore[misc]  # read-only here: the generators live in the sub-envs
    def np_random(self) -> tuple[Any, ...]:  # type: ignore[override]
        """Each sub-env's ``np_random``."""
        return self.get_attr("np_random")
