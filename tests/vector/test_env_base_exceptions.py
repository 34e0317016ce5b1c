"""An env that raises KeyboardInterrupt or SystemExit in a worker: its error, like any other; the worker lives."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from vecspaces.vector import AsyncVectorEnv

from .envs import CountdownEnv, FaultyEnv


@pytest.fixture(params=["fork", "forkserver", "spawn"])
def context(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("fault", "kind"), [("keyboard_interrupt", KeyboardInterrupt), ("system_exit", SystemExit)])
def test_an_env_raising_a_base_exception_reports_it_and_keeps_its_worker(
    context: str, fault: str, kind: type[BaseException]
) -> None:
    fns = [functools.partial(CountdownEnv, 100), functools.partial(FaultyEnv, fault, 1)]
    with AsyncVectorEnv(fns, context=context, num_workers=2) as envs:
        envs.reset(seed=0)
        pids = [info["pid"] for info in envs.worker_info()]
        with pytest.raises(kind) as caught:
            envs.step(np.ones(2, dtype=np.int64))
        assert any("env 1" in note for note in getattr(caught.value, "__notes__", []))
        assert "raised by env 1 during step" in str(caught.value.__cause__)
        if kind is SystemExit:
            assert caught.value.code == 4  # type: ignore[attr-defined]
        assert [info["pid"] for info in envs.worker_info()] == pids
        assert all(info["alive"] for info in envs.worker_info())
        obs = envs.step(np.ones(2, dtype=np.int64))[0]
        assert obs[:, 0].tolist() == [2, 2]
