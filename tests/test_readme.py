"""The README's two commands are what CI runs, and the files they name exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(), flags=re.DOTALL)
    return [block.strip() for block in blocks[:2]]


def test_readme_starts_with_the_demo_and_test_commands() -> None:
    demo, tests = readme_commands()
    assert "pip install ." in demo and "python examples/async_pool_demo.py" in demo
    assert 'pip install -e ".[test]"' in tests and tests.endswith("python -m pytest")
    assert (ROOT / "examples" / "async_pool_demo.py").is_file()


def test_ci_runs_the_readme_commands() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    demo, tests = readme_commands()
    for command in demo.split(" && ")[2:] + tests.split(" && ")[2:]:
        assert command in ci, f"{command!r} from the README is not run by .ci/run"


@pytest.mark.timeout(300)
def test_readme_python_examples_run() -> None:

    # ```python blocks are runnable examples; ```py blocks are excerpts (the layout section's worked example).
    blocks = re.findall(r"```python\n(.*?)\n```", (ROOT / "README.md").read_text(), flags=re.DOTALL)
    assert len(blocks) >= 2 and "# was: from gymnasium.vector import AsyncVectorEnv" in blocks[0]
    for block in blocks:
        result = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert result.returncode == 0, f"{block}\n{result.stderr}"
