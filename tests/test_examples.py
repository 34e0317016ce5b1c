"""The README's example scripts run, with gymnasium unavailable, and print what they promise."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# Runs a script with every gymnasium import failing, as after a plain `pip install .`.
WITHOUT_GYMNASIUM = """
import runpy, sys
class BlockGymnasium:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "gymnasium":
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, BlockGymnasium())
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def run_example(name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_GYMNASIUM, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=EXAMPLES.parent,
    )


@pytest.fixture(scope="module")
def spaces_tour() -> subprocess.CompletedProcess[str]:
    return run_example("spaces_tour.py")


def test_spaces_tour_exits_cleanly(spaces_tour: subprocess.CompletedProcess[str]) -> None:
    assert spaces_tour.returncode == 0, spaces_tour.stderr
    assert spaces_tour.stderr == ""


@pytest.mark.parametrize(
    "heading",
    [
        "vecspaces spaces tour",
        "1. A nested observation space",
        "2. A seeded sample (seed=42)",
        "3. Masks: sampling only allowed actions",
        "4. Flatten: one vector for a network",
        "5. Batching for 4 environments",
    ],
)
def test_spaces_tour_prints_its_sections(spaces_tour: subprocess.CompletedProcess[str], heading: str) -> None:
    assert heading in spaces_tour.stdout.splitlines()


def test_spaces_tour_checks_all_pass(spaces_tour: subprocess.CompletedProcess[str]) -> None:
    lines = spaces_tour.stdout.splitlines()
    checks = [line for line in lines if line.rstrip().endswith(("True", "False"))]
    assert len(checks) == 4, checks  # in the space, unflatten, iterate, batch in batched space
    assert all(line.rstrip().endswith("True") for line in checks), checks
    assert any("NotFlattenableError" in line for line in lines)


def test_spaces_tour_masked_samples_are_allowed(spaces_tour: subprocess.CompletedProcess[str]) -> None:
    found = re.search(r"12 masked samples +(\[[-0-9, ]*\])", spaces_tour.stdout)
    assert found, spaces_tour.stdout
    samples = ast.literal_eval(found.group(1))
    assert len(samples) == 12 and set(samples) <= {2, 4, 5}
