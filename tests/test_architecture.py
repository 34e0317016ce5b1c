"""The package's architecture holds: no import cycle, a strict stack of layers, and a new kind is three edits.

The import graph is read from the source with ``ast``: module-level and function-level imports (those under
``if TYPE_CHECKING`` too). ``import a.b`` and ``from a.b import c`` depend on ``a.b``, or on ``a.b.c`` when
that is a module. Python also runs the ``__init__`` of every package above a module it imports, so the layer
test also counts those packages, except the ones the importing module is itself inside (their ``__init__`` is
already running when it is imported).

The layers, each importing only the ones below it::

    error  <  space base + operation declarations  <  concrete spaces  <  kernels  <  the rest (vector, ...)
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "vecspaces"

# Layer of a module: the first prefix it matches (a prefix matches the module itself and its submodules).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("error", ("vecspaces.error",)),
    ("space base and operation declarations", ("vecspaces._space", "vecspaces._ops")),
    ("concrete spaces", ("vecspaces.spaces",)),
    ("kernels", ("vecspaces._kernels",)),
]
TOP = "the rest: vector envs and utilities, Gymnasium adapter, package root"

# The private attributes of spaces that kernels may read, each documented in its class (vecspaces._space.Space,
# Box, Discrete, MultiBinary, MultiDiscrete, Text): everything else they use is public.
KERNEL_FACING = {
    "_shape",  # Space
    "_kernel_cache",  # Space: what kernels precompute, see vecspaces._space.KernelCache
    "_from_checked",  # Box
    "_size",  # Box, MultiBinary
    "_vector_size",  # Box, MultiBinary
    "_count",  # Discrete
    "_low",  # Discrete
    "_high",  # Discrete, MultiDiscrete
    "_scalar_type",  # Discrete
    "_char_codes",  # Text
    "_char_list",  # Text
}


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root``, by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> Iterator[str]:
    """The modules of the package that one import statement depends on (not their parent packages)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name in known)
        return
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    for alias in node.names:
        submodule = f"{target}.{alias.name}"
        if submodule in known:
            yield submodule
        elif target in known:
            yield target


def import_graph(root: Path, with_packages: bool = False) -> dict[str, set[str]]:
    """Module -> the package's modules it imports; ``with_packages`` adds the packages Python runs on the way."""
    found = modules(root)
    known = set(found)
    graph: dict[str, set[str]] = {}
    for module, path in found.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps.update(imported(module, path.name == "__init__.py", node, known))
        if with_packages:
            own = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 2)}
            for dep in list(deps):
                parts = dep.split(".")
                deps.update(".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) not in own)
        deps.discard(module)
        graph[module] = deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for dep in sorted(graph[module]):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state:
                cycle = visit(dep)
                if cycle:
                    return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def layer(module: str) -> int:
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes):
            return index
    return len(LAYERS)


def layer_name(index: int) -> str:
    return LAYERS[index][0] if index < len(LAYERS) else TOP


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{module} ({layer_name(layer(module))}) imports {dep} ({layer_name(layer(dep))})"
        for module, deps in sorted(graph.items())
        for dep in sorted(deps)
        if layer(dep) > layer(module)
    ]


@pytest.mark.parametrize("with_packages", [False, True], ids=["modules", "with-packages-run-on-the-way"])
def test_the_package_has_no_import_cycle(with_packages: bool) -> None:
    cycle = find_cycle(import_graph(ROOT, with_packages))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_layer_imports_a_layer_above_it() -> None:
    upward = upward_imports(import_graph(ROOT, with_packages=True))
    assert not upward, "\n".join(upward)


def test_the_graph_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "error.py").write_text("def f():\n    from vecspaces.sub import low\n")
    (package / "sub" / "__init__.py").write_text("from . import low\n")
    (package / "sub" / "low.py").write_text("from ..error import f\n")
    graph = import_graph(tmp_path)
    assert graph["vecspaces.error"] == {"vecspaces.sub.low"}
    assert graph["vecspaces.sub.low"] == {"vecspaces.error"}
    assert find_cycle(graph) == ["vecspaces.error", "vecspaces.sub.low", "vecspaces.error"]
    assert import_graph(tmp_path, with_packages=True)["vecspaces.error"] == {"vecspaces.sub", "vecspaces.sub.low"}
    assert [line.split(" (")[0] for line in upward_imports(graph)] == ["vecspaces.error"]  # error is the bottom


def private_attributes_read_by_kernels(root: Path) -> dict[str, set[str]]:
    """Private (not dunder) attributes the kernel modules read on objects other than modules and ``self``."""
    found: dict[str, set[str]] = {}
    for path in sorted((root / PACKAGE / "_kernels").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_names = {
            (alias.asname or alias.name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        for node in ast.walk(tree):
            private = isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
            if private and not (isinstance(node.value, ast.Name) and node.value.id in {*module_names, "self"}):
                found.setdefault(node.attr, set()).add(path.name)
    return found


def test_kernels_read_only_the_documented_private_attributes_of_spaces() -> None:
    found = private_attributes_read_by_kernels(ROOT)
    undocumented = {name: sorted(files) for name, files in found.items() if name not in KERNEL_FACING}
    assert not undocumented, f"document these in the space class, or make them public: {undocumented}"


# A new kind of space, added as the README says: its space module, its kernel module and one export.
COLOR_SPACE = '''
"""The Color space: RGB triples."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._space import Space, space_kind


@space_kind
class Color(Space[npt.NDArray[np.uint8]]):
    """RGB colours: uint8 arrays of shape (3,)."""

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        super().__init__((3,), np.uint8, seed)

    @property
    def is_np_flattenable(self) -> bool:
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> npt.NDArray[np.uint8]:
        return self.np_random.integers(0, 256, size=3, dtype=np.uint8)

    def contains(self, x: Any) -> bool:
        return isinstance(x, np.ndarray) and x.shape == (3,) and x.dtype == np.uint8

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Color)

    def __repr__(self) -> str:
        return "Color()"
'''

COLOR_KERNELS = '''
"""The operations on Color: a fixed-size array kind, so the helpers of vecspaces._kernels.arrays do most."""

from __future__ import annotations

from typing import Any

import numpy as np

from vecspaces._kernels.arrays import array_layout, iterate_rows, same_array_layout, stack_into
from vecspaces._ops.batch import batch_differing_spaces, batch_space, concatenate, create_empty_array, iterate
from vecspaces._ops.flatten import flatdim, flatten, flatten_space, is_space_dtype_shape_equiv, unflatten
from vecspaces._ops.memory_nodes import layout_nodes
from vecspaces.spaces.box import Box
from vecspaces.spaces.color import Color

flatdim.register(Color, lambda space: 3)
flatten_space.register(Color, lambda space: Box(0, 255, (3,), np.uint8))
flatten.register(Color, lambda space, x: np.array(x, dtype=np.uint8).reshape(3))
unflatten.register(Color, lambda space, x: np.array(x, dtype=np.uint8).reshape(3))
is_space_dtype_shape_equiv.register(Color, same_array_layout)
batch_space.register(Color, lambda space, n=1: Box(0, 255, (n, 3), np.uint8))
batch_differing_spaces.register(Color, lambda spaces: Box(0, 255, (len(spaces), 3), np.uint8))
concatenate.register(Color, stack_into)
iterate.register(Color, iterate_rows)
create_empty_array.register(Color, lambda space, n=1, fn=np.zeros: fn((n, 3), dtype=np.uint8))
layout_nodes.register(Color, array_layout)
'''

# What the copy of the package with Color added must do; run in a fresh interpreter.
COLOR_CHECKS = """
import numpy as np
import pytest

import vecspaces
from vecspaces._kernels import support as table
from vecspaces.error import CustomSpaceError
from vecspaces.spaces import Color, Dict, Discrete, flatdim, flatten, to_gymnasium, unflatten
from vecspaces.vector.utils import (
    batch_space,
    concatenate,
    create_empty_array,
    create_shared_memory,
    iterate,
    read_from_shared_memory,
    write_to_shared_memory,
)

assert vecspaces.Color is Color and "Color" in vecspaces.__all__  # exported by the package root too

# A column of the support table, supported everywhere (every kernel registered), rendered.
assert "Color" in table.KINDS
assert all(table.support(operation, Color).supported for operation in table.OPERATIONS)
assert "Color" in table.render_support_table().splitlines()[0].split()

space = Color(seed=0)
values = [space.sample() for _ in range(3)]

# Flattens, also inside a Dict.
assert flatdim(space) == 3 and np.array_equal(unflatten(space, flatten(space, values[0])), values[0])
outer = Dict(color=space, gear=Discrete(2))
assert flatdim(outer) == 5

# Batches: a Box of rows, iterated back into the values.
batched = batch_space(space, 3)
assert batched.shape == (3, 3) and batched.dtype == np.uint8
batch = concatenate(space, values, create_empty_array(space, 3))
assert all(np.array_equal(a, b) for a, b in zip(iterate(batched, batch), values, strict=True))

# Shared memory: its own slot of a Dict's buffer.
memory = create_shared_memory(outer, 2)
write_to_shared_memory(outer, 1, {"color": values[1], "gear": np.int64(1)}, memory)
read = read_from_shared_memory(outer, memory, 2)
assert np.array_equal(read["color"][1], values[1]) and read["gear"][1] == 1

# No Gymnasium converter was registered: the conversion refuses it by name, at its path.
with pytest.raises(CustomSpaceError, match=r"Color.*at space\\['color'\\]"):
    to_gymnasium(outer)
print("color ok")
"""


def test_a_new_kind_is_its_space_module_its_kernel_module_and_one_export(tmp_path: Path) -> None:
    shutil.copytree(ROOT / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / PACKAGE / "spaces" / "color.py").write_text(textwrap.dedent(COLOR_SPACE))
    (tmp_path / PACKAGE / "_kernels" / "color.py").write_text(textwrap.dedent(COLOR_KERNELS))
    exports = tmp_path / PACKAGE / "spaces" / "__init__.py"
    text = exports.read_text()
    # The one export: its import and its name in __all__, in vecspaces/spaces/__init__.py.
    text = text.replace(
        "from vecspaces.spaces.box import Box\n",
        "from vecspaces.spaces.box import Box\nfrom vecspaces.spaces.color import Color\n",
    )
    exports.write_text(text.replace("__all__ = [\n", '__all__ = [\n    "Color",\n'))

    graph = import_graph(tmp_path, with_packages=True)
    core = {module: {dep for dep in deps if layer(dep) < len(LAYERS)} for module, deps in graph.items()}
    assert find_cycle({module: deps for module, deps in core.items() if layer(module) < len(LAYERS)}) is None
    assert not upward_imports(graph)
    assert "vecspaces.spaces.color" in graph["vecspaces._kernels.color"]
    result = subprocess.run(
        [sys.executable, "-c", COLOR_CHECKS],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "color ok"
