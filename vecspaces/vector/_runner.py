"""One sub-environment stepped under the vector autoreset rules.

SyncVectorEnv and the async pool's workers both drive their envs through :class:`EnvRunner`, so the two
backends cannot disagree on autoreset semantics.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from vecspaces.error import EpisodeEndedError, message
from vecspaces.vector.vector_env import AutoresetMode

__all__ = ["EnvRunner"]

StepResult = tuple[Any, Any, Any, Any, dict[str, Any]]


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

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the env; an explicit reset clears any pending autoreset, in every mode."""
        obs, info = self.env.reset(seed=seed, options=options)
        self.episode_ended = False
        return obs, info

    def step(self, action: Any) -> StepResult:
        """Step the env (or autoreset it) and return ``(obs, reward, terminated, truncated, info)``."""
        if self.episode_ended:
            if self.mode is AutoresetMode.NEXT_STEP:
                obs, info = self.reset()
                return obs, 0.0, False, False, info
            if self.mode is AutoresetMode.DISABLED:
                raise EpisodeEndedError(
                    message(
                        f"env {self.index} was stepped after its episode ended",
                        expected="a reset before the next step when autoreset is disabled",
                        got="a step",
                        fix="call reset(options={'reset_mask': terminations | truncations}) first",
                    )
                )
        result = self.env.step(action)
        obs, reward, terminated, truncated, info = result
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
