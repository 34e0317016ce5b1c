"""Deciding a vector env's batched spaces from its sub-envs' spaces (``observation_mode``), for every backend."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vecspaces._ops.batch import batch_differing_spaces, batch_space
from vecspaces._ops.flatten import is_space_dtype_shape_equiv
from vecspaces.error import InvalidTypeError, InvalidValueError, SpaceMismatchError, message, show
from vecspaces.spaces import Space, from_gymnasium

__all__ = [
    "VectorSpaces",
    "as_vecspaces_observation_mode",
    "as_vecspaces_space",
    "check_observation_mode",
    "resolve_env_spaces",
    "resolve_spaces",
]

ObservationMode = str | tuple[Space[Any], Space[Any]]


@dataclass(frozen=True)
class VectorSpaces:
    """The four spaces of a vector env of ``num_envs`` envs, and the action spaces of batches of fewer envs."""

    single_observation_space: Space[Any]
    observation_space: Space[Any]
    single_action_space: Space[Any]
    action_space: Space[Any]
    num_envs: int
    # The batched action space by batch size, made once: batch_space of a Dict costs ~0.1 ms, which pool mode
    # would otherwise pay at every send of a subset of the envs (most often of the batch size, step after step).
    _batched_actions: dict[int, Space[Any]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._batched_actions[self.num_envs] = self.action_space

    def batched_action_space(self, count: int) -> Space[Any]:
        """The action space of a batch of ``count`` actions: ``action_space`` for every env."""
        batched = self._batched_actions.get(count)
        if batched is None:
            batched = self._batched_actions[count] = batch_space(self.single_action_space, count)
        return batched


def as_vecspaces_space(space: Any, what: str) -> Space[Any]:
    """Return ``space`` as a vecspaces space, converting a Gymnasium space (envs may be ``gymnasium.Env``)."""
    if isinstance(space, Space):
        return space
    try:
        return from_gymnasium(space)
    except (ImportError, TypeError) as error:
        raise InvalidTypeError(
            message(f"{what} is not a space", expected="a vecspaces or gymnasium space", got=show(space))
        ) from error


def as_vecspaces_observation_mode(observation_mode: Any) -> Any:
    """``observation_mode`` with a ``(batched, single)`` pair of Gymnasium spaces converted; else as it is."""
    if isinstance(observation_mode, tuple) and len(observation_mode) == 2:
        return tuple(
            as_vecspaces_space(space, f"observation_mode[{index}]") for index, space in enumerate(observation_mode)
        )
    return observation_mode


def check_observation_mode(observation_mode: Any) -> None:
    """Raise if ``observation_mode`` is not ``"same"``, ``"different"`` or a ``(batched, single)`` pair of spaces.

    Example:
        >>> check_observation_mode("sometimes")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecspaces.error.InvalidValueError: observation_mode is invalid, expected 'same', 'different' or a ...
    """
    if isinstance(observation_mode, tuple):
        if len(observation_mode) != 2 or not all(isinstance(space, Space) for space in observation_mode):
            raise InvalidTypeError(
                message(
                    "observation_mode pair is invalid",
                    expected="(batched observation space, single observation space)",
                    got=show(observation_mode),
                )
            )
    elif not isinstance(observation_mode, str) or observation_mode not in ("same", "different"):
        raise InvalidValueError(
            message(
                "observation_mode is invalid",
                expected="'same', 'different' or a (batched, single) pair of spaces",
                got=show(observation_mode),
            )
        )


def resolve_env_spaces(
    observation_mode: ObservationMode, observation_spaces: Sequence[Any], action_spaces: Sequence[Any]
) -> VectorSpaces:
    """:func:`resolve_spaces` over the sub-envs' own spaces, Gymnasium's converted (errors name the env)."""
    return resolve_spaces(
        observation_mode,
        [as_vecspaces_space(space, f"env {i} observation_space") for i, space in enumerate(observation_spaces)],
        [as_vecspaces_space(space, f"env {i} action_space") for i, space in enumerate(action_spaces)],
    )


def resolve_spaces(
    observation_mode: ObservationMode,
    observation_spaces: Sequence[Space[Any]],
    action_spaces: Sequence[Space[Any]],
) -> VectorSpaces:
    """Batch the sub-envs' spaces as ``observation_mode`` says, after checking they are compatible.

    Args:
        observation_mode: ``"same"`` (every observation space equal to env 0's), ``"different"`` (same kind,
            shape and dtype, bounds may differ), or an explicit ``(batched, single)`` pair of spaces.
        observation_spaces: each sub-env's observation space.
        action_spaces: each sub-env's action space; they must all be equal.

    Raises:
        SpaceMismatchError: a sub-env's space does not fit the mode.
        InvalidValueError: ``observation_mode`` is not one of the accepted forms.
    """
    single_action = action_spaces[0]
    for index, space in enumerate(action_spaces):
        if space != single_action:
            raise SpaceMismatchError(
                message(
                    f"env {index}'s action space differs from env 0's",
                    expected=repr(single_action),
                    got=repr(space),
                    fix="every sub-env must have the same action space",
                )
            )
    check_observation_mode(observation_mode)
    if isinstance(observation_mode, tuple):
        batched, single = observation_mode
    elif observation_mode == "same":
        single = observation_spaces[0]
        batched = batch_space(single, len(observation_spaces))
    else:
        single = observation_spaces[0]
        batched = batch_differing_spaces(list(observation_spaces))
    for index, space in enumerate(observation_spaces):
        if observation_mode == "same" and space != single:
            raise SpaceMismatchError(
                message(
                    f"env {index}'s observation space differs from env 0's",
                    expected=repr(single),
                    got=repr(space),
                    fix="use observation_mode='different' if their bounds are meant to differ",
                )
            )
        if observation_mode != "same" and not is_space_dtype_shape_equiv(space, single):
            raise SpaceMismatchError(
                message(
                    f"env {index}'s observation space cannot be batched with the others",
                    expected=f"the kind, shape and dtype of {single!r}",
                    got=repr(space),
                )
            )
    num_envs = len(action_spaces)
    return VectorSpaces(single, batched, single_action, batch_space(single_action, num_envs), num_envs)
