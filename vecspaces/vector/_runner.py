"""One sub-environment stepped under the vector autoreset rules.

SyncVectorEnv and the async pool's workers both drive their envs through :class:`EnvRunner`, so the two
backends cannot disagree on autoreset semantics.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from typing import Any

import numpy as np

from vecspaces.error import EpisodeEndedError, InvalidTypeError, InvalidValueError, message, show
from vecspaces.vector.vector_env import AutoresetMode

__all__ = ["ENV_ATTRIBUTES", "EnvRunner", "build_env"]

# What every backend calls on a sub-env (duck typing: a gymnasium.Env has them all).
ENV_ATTRIBUTES = ("observation_space", "action_space", "reset", "step", "close")


def build_env(env_fn: Callable[[], Any], index: int) -> Any:
    """Call the factory of env ``index`` and check that what it returned is an env.

    Raises:
        InvalidTypeError: the factory returned something without an env's attributes (None, a number, a class...).

    Example:
        >>> build_env(lambda: None, 3)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecspaces.error.InvalidTypeError: env_fns[3] did not return an env, expected an object with ...
    """
    env = env_fn()
    missing = [name for name in ENV_ATTRIBUTES if not hasattr(env, name)]
    if missing or isinstance(env, type):
        raise InvalidTypeError(
            message(
                f"env_fns[{index}] did not return an env",
                expected=f"an object with {', '.join(ENV_ATTRIBUTES)} (a gymnasium.Env, for one)",
                got=f"the class {env.__qualname__}"
                if isinstance(env, type)
                else f"{show(env)}, which has no {', '.join(missing)}",
                fix="make each factory return a new env, e.g. lambda: gymnasium.make('CartPole-v1')",
            )
        )
    return env


StepResult = tuple[Any, Any, Any, Any, dict[str, Any]]

# The types of rewards and flags checked by a set lookup; anything else takes the slower look of check_step.
_PLAIN_REWARDS = frozenset((float, int, bool, np.float64, np.float32, np.int64, np.int32))
_PLAIN_FLAGS = frozenset((bool, np.bool_))


def _one_value(value: Any) -> Any:
    """A size-1 array as the numpy scalar it holds (numpy 2 will not store an array of shape (1,) in one slot).

    Example:
        >>> value = _one_value(np.array([[1.5]]))
        >>> value, type(value).__name__, _one_value(2)
        (1.5, 'float64', 2)
    """
    return value.reshape(())[()] if isinstance(value, np.ndarray) else value


def check_step(reward: Any, terminated: Any, truncated: Any, index: int) -> None:
    """Raise unless ``reward`` is a real number and the flags are bools (numpy's, or size-1 arrays, too).

    Stored as they come, a reward of None would become NaN and a flag of "yes" True, without a word.

    Raises:
        InvalidTypeError: naming env ``index``, the value and what was expected.
        InvalidValueError: the reward is an array of more or fewer than one number.

    Example:
        >>> check_step(1.0, False, np.bool_(True), 0)
        >>> check_step(None, False, False, 2)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecspaces.error.InvalidTypeError: env 2 returned a reward that is not a real number, expected ...
    """
    if type(reward) not in _PLAIN_REWARDS and not _is_real(reward):
        if isinstance(reward, np.ndarray) and reward.size != 1 and reward.dtype.kind in "biuf":
            raise InvalidValueError(
                message(
                    f"env {index} returned a reward of {reward.size} numbers",
                    expected="one real number",
                    got=show(reward),
                    fix="return one reward per step, e.g. float(reward.sum())",
                )
            )
        raise InvalidTypeError(
            message(
                f"env {index} returned a reward that is not a real number",
                expected="an int, a float, a numpy integer or floating scalar, or an array of one of those",
                got=show(reward),
                fix="return float(reward) from step()",
            )
        )
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if type(flag) not in _PLAIN_FLAGS and not _is_bool(flag):
            raise InvalidTypeError(
                message(
                    f"env {index} returned {name} that is not a bool",
                    expected="a bool or a numpy bool",
                    got=show(flag),
                    fix=f"return bool({name}) from step()",
                )
            )


def episode_ended(index: int, why: str = "") -> EpisodeEndedError:
    """The error of a step of env ``index`` after its episode ended, autoreset disabled (``why``: a remark)."""
    return EpisodeEndedError(
        message(
            f"env {index} was stepped after its episode ended{why}",
            expected="a reset before the next step when autoreset is disabled",
            got="a step",
            fix="call reset(options={'reset_mask': terminations | truncations}) first",
        )
    )


def reward_out_of_range(reward: Any, index: int) -> InvalidValueError:
    """The error for env ``index``'s reward, an int too large for the float64 rewards (raised where it is stored).

    Example:
        >>> print(reward_out_of_range(10**400, 1))  # doctest: +ELLIPSIS
        env 1 returned a reward beyond float64's range, expected ... got 1000...
    """
    return InvalidValueError(
        message(
            f"env {index} returned a reward beyond float64's range",
            expected="a real number of magnitude at most 1.8e308",
            got=show(reward),
            fix="scale or clip the reward in step()",
        )
    )


def _is_real(value: Any) -> bool:
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return True
    return isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biuf"


def _is_bool(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind == "b"


class EnvRunner:
    """Steps one env, resetting it when its episode ends as the autoreset mode says.

    Args:
        env: the sub-environment.
        index: its index in the vector env, for error messages.
        mode: the autoreset mode.
    """

    def __init__(self, env: Any, index: int, mode: AutoresetMode) -> None:
        self.env = env
        self.index = index
        self.mode = mode
        # True once an episode ended and no reset has happened since.
        self.episode_ended = False
        # True while the env replaces one whose worker died and has not said so yet (see restart_result).
        self.restarted = False
        self.ever_reset = False

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the env; an explicit reset clears any pending autoreset, in every mode."""
        obs, info = self.env.reset(seed=seed, options=options)
        self.episode_ended = False
        self.ever_reset = True
        if self.restarted:
            self.restarted = False
            info = {**info, "worker_restarted": True}
        return obs, info

    def restart_result(self) -> StepResult:
        """The first step result of an env that replaces one whose worker died: its reset, as a truncation.

        The action is not applied; ``info["worker_restarted"]`` says why. The episode counts as ended, so the
        next step autoresets (NEXT_STEP) or needs a reset (DISABLED), as after any truncation.
        """
        obs, info = self.reset()
        self.episode_ended = self.mode is not AutoresetMode.SAME_STEP  # in SAME_STEP obs already starts one
        return obs, 0.0, False, True, info

    def ensure_reset(self) -> None:
        """Reset a replacement env never reset yet, before a call on it; it still reports its restart later."""
        if self.restarted and not self.ever_reset:
            self.reset()
            self.restarted = True

    def step(self, action: Any) -> StepResult:
        """Step the env (or autoreset it) and return ``(obs, reward, terminated, truncated, info)``."""
        if self.restarted:
            return self.restart_result()
        if self.episode_ended:
            if self.mode is AutoresetMode.NEXT_STEP:
                obs, info = self.reset()
                return obs, 0.0, False, False, info
            if self.mode is AutoresetMode.DISABLED:
                raise episode_ended(self.index)
        result = self.env.step(action)
        obs, reward, terminated, truncated, info = result
        if (
            type(reward) not in _PLAIN_REWARDS
            or type(terminated) not in _PLAIN_FLAGS
            or type(truncated) not in _PLAIN_FLAGS
        ):
            check_step(reward, terminated, truncated, self.index)
            reward, terminated, truncated = _one_value(reward), _one_value(terminated), _one_value(truncated)
            result = obs, reward, terminated, truncated, info
        if not (terminated or truncated):
            return result  # episode_ended is False here: every mode handled an ended episode above
        self.episode_ended = True
        if self.mode is AutoresetMode.SAME_STEP:
            # Snapshot the final values: an env that reuses its buffers would overwrite them in reset().
            final = {"final_obs": deepcopy(obs), "final_info": deepcopy(info)}
            obs, reset_info = self.reset()
            # The final values win over reset-info keys of the same name (Gymnasium lets them be overwritten).
            info = final | {key: value for key, value in reset_info.items() if key not in final}
        return obs, reward, terminated, truncated, info
