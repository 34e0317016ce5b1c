"""SyncVectorEnv: every sub-env stepped in turn in the calling process; the reference the async pool matches."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from copy import deepcopy
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.batch import concatenate, create_empty_array
from vecspaces.error import Error, InvalidValueError, message, show
from vecspaces.vector._arguments import actions_per_env, env_factories, seeds_per_env, split_reset_mask
from vecspaces.vector._async.protocol import add_note, note_more_errors
from vecspaces.vector._gymnasium_facing import face_of_arguments
from vecspaces.vector._runner import EnvRunner, build_env, reward_out_of_range
from vecspaces.vector._spaces import ObservationMode, as_vecspaces_observation_mode, resolve_env_spaces
from vecspaces.vector.infos import add_info
from vecspaces.vector.vector_env import AutoresetMode, SubEnvsVectorEnv, autoreset_mode_of

__all__ = ["SyncVectorEnv"]


class SyncVectorEnv(SubEnvsVectorEnv[Any, Any, npt.NDArray[np.float64]]):
    """Run several environments one after the other in this process, as one batched environment.

    Args:
        env_fns: callables that each create one sub-environment.
        copy: if True, ``reset`` and ``step`` return observations the next call will not overwrite.
        observation_mode: ``"same"``, ``"different"`` or a ``(batched, single)`` pair of spaces.
        autoreset_mode: an :class:`AutoresetMode` or its string value.

    Example:
        >>> from vecspaces.envs import TinyEnv
        >>> envs = SyncVectorEnv([TinyEnv] * 3)
        >>> obs, infos = envs.reset(seed=42)
        >>> obs.shape, envs.step(np.array([0, 1, 0]))[1]
        ((3, 4), array([1., 1., 1.]))
        >>> envs.close()
    """

    def __init__(
        self,
        env_fns: Iterable[Callable[[], Any]],
        copy: bool = True,
        observation_mode: ObservationMode = "same",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
    ) -> None:
        self.env_fns = env_factories(env_fns)
        self.copy = copy
        self.observation_mode = observation_mode
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        arguments_face = face_of_arguments(autoreset_mode, observation_mode)
        observation_mode = as_vecspaces_observation_mode(observation_mode)
        self.envs: list[Any] = []
        try:
            for index, fn in enumerate(self.env_fns):
                self.envs.append(build_env(fn, index))
        except BaseException:
            self.close_extras()  # the envs built so far
            raise
        self.num_envs = len(self.envs)
        self._runners = [EnvRunner(env, index, self.autoreset_mode) for index, env in enumerate(self.envs)]

        face = self._read_first_env(self.envs[0], arguments_face)
        spaces = resolve_env_spaces(
            observation_mode, [env.observation_space for env in self.envs], [env.action_space for env in self.envs]
        )
        self._spaces = spaces
        self._show_spaces(spaces, face)

        self._env_obs: list[Any] = [None] * self.num_envs
        self._observations = create_empty_array(spaces.single_observation_space, self.num_envs, np.zeros)
        self._rewards = np.zeros(self.num_envs, dtype=np.float64)
        self._terminations = np.zeros(self.num_envs, dtype=np.bool_)
        self._truncations = np.zeros(self.num_envs, dtype=np.bool_)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env, or those selected by ``options["reset_mask"]``.

        Args:
            seed: None, an int (env ``i`` gets ``seed + i``) or a list of one seed per env.
            options: passed to each reset sub-env; ``"reset_mask"`` (a bool array) selects which envs reset,
                the others keep their last observation.

        Returns:
            The batched observation and batched infos of the envs that were reset.
        """
        seeds = seeds_per_env(seed, self.num_envs)
        mask, options = split_reset_mask(options, self.num_envs)
        infos: dict[str, Any] = {}
        for index, runner in enumerate(self._runners):
            if mask is None or mask[index]:
                with _naming_env(index, "reset"):
                    self._env_obs[index], info = runner.reset(seed=seeds[index], options=options)
                self._terminations[index] = self._truncations[index] = False
                add_info(infos, info, index, self.num_envs)
        self._observations = self._batch_observations(None, self._observations, "reset")
        return (deepcopy(self._observations) if self.copy else self._observations), infos

    def step(
        self, actions: Any
    ) -> tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """Step every sub-env with its action (autoresetting as the mode says) and batch the results.

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``.
        """
        env_actions = actions_per_env(self._spaces.action_space, actions, self.num_envs)
        infos = self._step_envs(range(self.num_envs), env_actions, self.num_envs)
        self._observations = self._batch_observations(None, self._observations, "step")
        return (
            deepcopy(self._observations) if self.copy else self._observations,
            self._rewards.copy(),
            self._terminations.copy(),
            self._truncations.copy(),
            infos,
        )

    def _step_selected(
        self, actions: Any, env_ids: list[int]
    ) -> tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """Step only the envs ``env_ids`` (a batch of ``len(env_ids)`` actions); results batched over them, in order.

        What a Ray agent that steps its envs itself does in pool mode (see ``vecspaces.vector.ray``).
        """
        count = len(env_ids)
        env_actions = actions_per_env(self._spaces.batched_action_space(count), actions, count)
        infos = self._step_envs(env_ids, env_actions, count)
        out = create_empty_array(self._spaces.single_observation_space, count)
        observations = self._batch_observations(env_ids, out, "step")
        return observations, self._rewards[env_ids], self._terminations[env_ids], self._truncations[env_ids], infos

    def _batch_observations(self, env_ids: list[int] | None, out: Any, doing: str) -> Any:
        """The last observations of the envs ``env_ids`` (None: all) batched into ``out``.

        An error names an observation by its place in the batch (``items[2]``); a note says whose it is.
        """
        observations = self._env_obs if env_ids is None else [self._env_obs[i] for i in env_ids]
        try:
            return concatenate(self._spaces.single_observation_space, observations, out)
        except Error as error:
            whose = "env k's" if env_ids is None else f"env env_ids[k]'s, env_ids={env_ids}"
            add_note(error, f"while batching what the envs returned from {doing}: items[k] is {whose} observation")
            raise

    def _step_envs(self, env_ids: Iterable[int], env_actions: list[Any], batch: int) -> dict[str, Any]:
        """Step the envs ``env_ids``; keep their observations and results; return their infos batched over ``batch``."""
        infos: dict[str, Any] = {}
        runners = self._runners
        for position, (index, action) in enumerate(zip(env_ids, env_actions, strict=True)):
            try:  # as _naming_env does, without a context manager's cost per env and step
                obs, reward, terminated, truncated, info = runners[index].step(action)
            except Exception as error:
                add_note(error, f"raised by env {index} during step")
                raise
            self._env_obs[index] = obs
            self._store_step(index, reward, terminated, truncated)
            add_info(infos, info, position, batch)
        return infos

    def _store_step(self, index: int, reward: Any, terminated: Any, truncated: Any) -> None:
        try:
            self._rewards[index] = reward
        except OverflowError:
            raise reward_out_of_range(reward, index) from None
        except (TypeError, ValueError) as error:
            raise InvalidValueError(
                message(
                    f"env {index} returned a reward that is not a number",
                    expected="a scalar",
                    got=show(reward),
                )
            ) from error
        self._terminations[index] = terminated
        self._truncations[index] = truncated

    def render(self) -> tuple[Any, ...]:
        """Each sub-env's ``render()`` result."""
        return tuple(env.render() for env in self.envs)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every sub-env with the given arguments; plain attributes are returned."""
        results = []
        for env in self.envs:
            attribute = _get_attribute(env, name)
            results.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each sub-env's attribute ``name``. Unlike Gymnasium, a callable attribute is returned, not called."""
        return tuple(_get_attribute(env, name) for env in self.envs)

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env.

        A list or tuple gives one value per env; anything else is given to all.
        """
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise InvalidValueError(
                message(
                    "set_attr values has the wrong length",
                    expected=f"{self.num_envs} values",
                    got=show(values),
                )
            )
        for env, value in zip(self.envs, values, strict=True):
            setter = getattr(env, "set_wrapper_attr", None)
            if setter is not None:
                setter(name, value)
            else:
                setattr(env, name, value)

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-env; then raise the first error a ``close()`` raised, naming how many more did."""
        errors = []
        for index, env in enumerate(getattr(self, "envs", [])):
            try:
                env.close()
            except Exception as error:
                add_note(error, f"raised by env {index} during close")
                errors.append(error)
        if errors:
            note_more_errors(errors[0], len(errors) - 1)
            raise errors[0]


@contextlib.contextmanager
def _naming_env(index: int, doing: str) -> Iterator[None]:
    """An exception raised by env ``index`` gets a note naming it, in the words of ``AsyncVectorEnv``'s errors."""
    try:
        yield
    except Exception as error:
        add_note(error, f"raised by env {index} during {doing}")
        raise


def _get_attribute(env: Any, name: str) -> Any:
    getter = getattr(env, "get_wrapper_attr", None)
    return getter(name) if getter is not None else getattr(env, name)
