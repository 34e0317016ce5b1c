"""Workers give numpy's BLAS one thread (unless the user chose a count), whichever way they were started."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from tests.vector.envs import CountdownEnv
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector._async.blas_threads import THREAD_VARIABLES, loaded_libraries

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="loaded libraries are read from /proc"),
]

_GETTERS = ("openblas_get_num_threads", "openblas_get_num_threads64_", "scipy_openblas_get_num_threads64_")


def openblas_threads() -> int | None:
    """The thread count of the OpenBLAS numpy loaded in this process (None: numpy uses another BLAS)."""
    for path in loaded_libraries():
        if "openblas" in os.path.basename(path):
            library = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            getter = next((getattr(library, name) for name in _GETTERS if hasattr(library, name)), None)
            if getter is not None:
                return int(getter())
    return None


class BlasEnv(CountdownEnv):
    """Multiplies two matrices each step, and reports its process's OpenBLAS thread count and variables."""

    def step(self, action: Any) -> Any:
        matrix = np.ones((200, 200))
        matrix @ matrix
        return super().step(action)

    def blas(self) -> tuple[int | None, dict[str, str | None]]:
        return openblas_threads(), {name: os.environ.get(name) for name in THREAD_VARIABLES}


@pytest.fixture(autouse=True)
def numpy_on_openblas() -> None:
    if openblas_threads() is None:
        pytest.skip("this numpy does not use OpenBLAS")


@pytest.fixture
def no_thread_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_thread_variables")
@pytest.mark.parametrize("context", ["fork", "forkserver", "spawn"])
def test_every_worker_gives_blas_one_thread(context: str) -> None:
    with AsyncVectorEnv([BlasEnv] * 2, num_workers=2, context=context) as envs:
        envs.reset(seed=0)
        envs.step(np.zeros(2, dtype=np.int64))
        reports = envs.call("blas")
    assert [threads for threads, _ in reports] == [1, 1]
    assert all(variables == dict.fromkeys(THREAD_VARIABLES, "1") for _, variables in reports)


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_a_count_the_user_chose_is_left_alone(context: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    # What a worker's BLAS starts with when nobody caps it: the main process's count when forked, the variable's
    # when spawned (a new interpreter reads it).
    expected = openblas_threads() if context == "fork" else 2
    with AsyncVectorEnv([BlasEnv] * 2, num_workers=2, context=context) as envs:
        envs.reset(seed=0)
        reports = envs.call("blas")
    assert [threads for threads, _ in reports] == [expected, expected]
    assert reports[0][1] == {"OMP_NUM_THREADS": None, "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": None}


@pytest.mark.usefixtures("no_thread_variables")
def test_the_main_process_keeps_its_threads() -> None:
    before = openblas_threads()
    with AsyncVectorEnv([BlasEnv] * 2, num_workers=1, main_process_envs=1, context="fork") as envs:
        envs.reset(seed=0)
        envs.step(np.zeros(2, dtype=np.int64))
    assert openblas_threads() == before
    assert all(name not in os.environ for name in THREAD_VARIABLES)


def test_cap_worker_threads_names_the_libraries_it_told() -> None:
    code = (
        "import os, numpy\n"
        "from vecspaces.vector._async.blas_threads import cap_worker_threads\n"
        "print(any('openblas' in name for name in cap_worker_threads()), cap_worker_threads())\n"
    )
    clean = {key: value for key, value in os.environ.items() if key not in THREAD_VARIABLES}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean, check=True)
    assert result.stdout.split() == ["True", "[]"]  # the second call finds the variables set: nothing more to do
