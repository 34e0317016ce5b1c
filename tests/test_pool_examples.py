"""The worker-pool examples run in a subprocess, exit cleanly and print what they promise.

The two examples that need nothing but vecspaces run with every gymnasium import failing, as after a plain
``pip install .``; the CartPole example needs gymnasium and is skipped without it.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vecspaces.envs import DemoEnv

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SUBPROCESS_TIMEOUT = 120
HAS_GYMNASIUM = importlib.util.find_spec("gymnasium") is not None

# The pytest timeout is longer than the subprocess's, so a hanging example fails with its own TimeoutExpired.
pytestmark = pytest.mark.timeout(SUBPROCESS_TIMEOUT + 30)

# Runs a script with every gymnasium import failing.
WITHOUT_GYMNASIUM = """
import runpy, sys
class BlockGymnasium:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "gymnasium":
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, BlockGymnasium())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_example(name: str, block_gymnasium: bool) -> subprocess.CompletedProcess[str]:
    script = str(EXAMPLES / name)
    command = [sys.executable, "-c", WITHOUT_GYMNASIUM, script] if block_gymnasium else [sys.executable, script]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT, cwd=EXAMPLES.parent, check=False
    )


def assert_clean_exit(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def table_value(stdout: str, label: str) -> str:
    """The value printed after ``label`` at the start of an indented table row."""
    found = re.search(rf"^ +{re.escape(label)} +(.+)$", stdout, re.MULTILINE)
    assert found, f"no row {label!r} in:\n{stdout}"
    return found.group(1).strip()


# -- async_pool_demo.py -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> subprocess.CompletedProcess[str]:
    return run_example("async_pool_demo.py", block_gymnasium=True)


def test_demo_exits_cleanly(demo: subprocess.CompletedProcess[str]) -> None:
    assert_clean_exit(demo)


@pytest.mark.parametrize(
    "heading",
    [
        "vecspaces AsyncVectorEnv demo",
        "1. Batched observation (reset(seed=42))",
        "2. A few decoded values",
        "3. Stepping 3000 times with random actions",
        "4. Worker processes",
    ],
)
def test_demo_prints_its_sections(demo: subprocess.CompletedProcess[str], heading: str) -> None:
    assert heading in demo.stdout.splitlines()


@pytest.mark.parametrize(
    ("leaf", "shape", "dtype", "transport"),
    [
        ("camera", "(8, 32, 32, 3)", "uint8", "shared memory"),
        ("position", "(8, 2)", "float32", "shared memory"),
        ("heading", "(8,)", "int64", "shared memory"),
        ("bumpers", "(8, 4)", "int8", "shared memory"),
        ("battery", "(8, 2)", "int64", "shared memory"),
        ("mission", "8 strings", "str", "shared memory"),
        ("beacons", "8 arrays of shape (k, 2)", "float32", "pipe (variable size)"),
    ],
)
def test_demo_lists_every_leaf_with_its_transport(
    demo: subprocess.CompletedProcess[str], leaf: str, shape: str, dtype: str, transport: str
) -> None:
    row = table_value(demo.stdout, f"obs[{leaf!r}]")
    assert re.split(r"\s{2,}", row) == [shape, dtype, transport]


def test_demo_leaves_cover_the_observation_space(demo: subprocess.CompletedProcess[str]) -> None:
    printed = re.findall(r"^ +obs\['(\w+)'\]", demo.stdout, re.MULTILINE)
    assert printed == list(DemoEnv.observation_space.spaces)


def test_demo_decodes_missions_and_beacons(demo: subprocess.CompletedProcess[str]) -> None:
    missions = re.findall(r"'([a-z ]+)'", table_value(demo.stdout, "missions"))
    assert len(missions) == 4 and set(missions) <= set(DemoEnv.MISSIONS)
    counts = ast.literal_eval(table_value(demo.stdout, "beacons per env"))
    assert len(counts) == 8 and all(0 <= count <= 3 for count in counts)
    position = [float(x) for x in table_value(demo.stdout, "env 0 position").strip("[]").split()]
    assert len(position) == 2 and all(-10.0 <= x <= 10.0 for x in position)


def test_demo_reports_throughput(demo: subprocess.CompletedProcess[str]) -> None:
    vector = float(table_value(demo.stdout, "vector steps per second").replace(",", ""))
    env = float(table_value(demo.stdout, "env steps per second").replace(",", ""))
    assert vector > 0 and env == pytest.approx(8 * vector, rel=0.01, abs=8)
    episodes = int(table_value(demo.stdout, "episodes finished").split()[0])
    assert episodes > 0


def test_demo_lists_live_workers_that_exit_at_close(demo: subprocess.CompletedProcess[str]) -> None:
    rows = re.findall(r"^ +(\d+) +(\d+) +(\d+)-(\d+) +(yes|no) +([\d.]+) MiB$", demo.stdout, re.MULTILINE)
    assert rows, demo.stdout
    assert [int(row[0]) for row in rows] == list(range(len(rows)))
    assert len({row[1] for row in rows}) == len(rows), "every worker has its own pid"
    envs = [env for row in rows for env in range(int(row[2]), int(row[3]) + 1)]
    assert envs == list(range(8)), "the workers share the 8 envs in contiguous slices"
    assert all(row[4] == "yes" and float(row[5]) > 0 for row in rows)
    assert f"closed: {len(rows)} of {len(rows)} worker processes have exited" in demo.stdout


# -- shared_memory_workers.py -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_memory_workers() -> subprocess.CompletedProcess[str]:
    return run_example("shared_memory_workers.py", block_gymnasium=True)


def test_shared_memory_workers_exits_cleanly(shared_memory_workers: subprocess.CompletedProcess[str]) -> None:
    assert_clean_exit(shared_memory_workers)


@pytest.mark.parametrize(
    "heading",
    [
        "vecspaces shared memory between your own processes",
        "1. The shared layout: one region per leaf, 3 values in each",
        "2. 3 spawned workers write, the main process reads",
        "3. A bad write is refused before anything is copied",
    ],
)
def test_shared_memory_workers_prints_its_sections(
    shared_memory_workers: subprocess.CompletedProcess[str], heading: str
) -> None:
    assert heading in shared_memory_workers.stdout.splitlines()


def test_shared_memory_workers_read_every_frame(shared_memory_workers: subprocess.CompletedProcess[str]) -> None:
    stdout = shared_memory_workers.stdout
    for round_ in range(4):
        captions = [f"worker {w} frame {round_}" for w in range(3)]
        levels = [40 * w + 10 * round_ for w in range(3)]
        assert f"   round {round_}: captions {captions}, image levels {levels}" in stdout.splitlines()
    assert "   every frame arrived intact: True" in stdout.splitlines()


def test_shared_memory_workers_bad_write(shared_memory_workers: subprocess.CompletedProcess[str]) -> None:
    stdout = shared_memory_workers.stdout
    assert "InvalidValueError: value for env 0 has the wrong shape" in stdout
    assert "value['image']" in stdout
    assert "   slot 0 unchanged: True" in stdout.splitlines()


# -- gymnasium_cartpole.py ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cartpole() -> subprocess.CompletedProcess[str]:
    if not HAS_GYMNASIUM:
        pytest.skip("gymnasium is not installed")
    return run_example("gymnasium_cartpole.py", block_gymnasium=False)


def test_cartpole_exits_cleanly(cartpole: subprocess.CompletedProcess[str]) -> None:
    assert_clean_exit(cartpole)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("the env's observation space", "gymnasium Box (4,) float32"),
        ("envs.single_observation_space", "gymnasium Box (4,) float32, same bounds: True"),
        ("the env's action space", "gymnasium Discrete () int64"),
        ("envs.single_action_space", "gymnasium Discrete () int64"),
        ("envs.observation_space", "gymnasium Box (8, 4) float32"),
        ("envs.action_space", "gymnasium MultiDiscrete (8,) int64"),
        ("a gymnasium.vector.VectorEnv", "True"),
    ],
)
def test_cartpole_shows_gymnasium_types(cartpole: subprocess.CompletedProcess[str], label: str, expected: str) -> None:
    assert table_value(cartpole.stdout, label) == expected


def test_cartpole_plays_episodes(cartpole: subprocess.CompletedProcess[str]) -> None:
    found = re.search(r"(\d+) episodes finished, mean return ([\d.]+)", cartpole.stdout)
    assert found, cartpole.stdout
    assert int(found.group(1)) > 0 and float(found.group(2)) >= 1.0


def test_cartpole_matches_gymnasium(cartpole: subprocess.CompletedProcess[str]) -> None:
    assert "observations, rewards, terminations and truncations identical: True" in cartpole.stdout


def test_cartpole_without_gymnasium_says_how_to_install_it() -> None:
    result = run_example("gymnasium_cartpole.py", block_gymnasium=True)
    assert result.returncode == 1
    assert "gymnasium is not installed" in result.stderr
    assert "pip install gymnasium" in result.stderr
    assert "Traceback" not in result.stderr
