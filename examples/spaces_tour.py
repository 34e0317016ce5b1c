"""A short tour of vecspaces: spaces, seeded samples, masks, flattening and batching.

Run it with ``python examples/spaces_tour.py``; it needs nothing but vecspaces (and numpy).
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from vecspaces.error import NotFlattenableError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    MultiBinary,
    MultiDiscrete,
    Sequence,
    Space,
    Text,
    flatdim,
    flatten,
    flatten_space,
    unflatten,
)
from vecspaces.vector.utils import batch_space, concatenate, create_empty_array, iterate

NUM_ENVS = 4


def heading(number: int, title: str) -> None:
    print(f"\n{number}. {title}\n{'-' * (len(title) + 3)}")


def table(rows: list[tuple[str, ...]], header: tuple[str, ...] | None = None) -> None:
    """Print rows in aligned columns, under a header if one is given."""
    lines = rows if header is None else [header, *rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    if header is not None:
        lines.insert(1, tuple("-" * width for width in widths))
    for line in lines:
        print("   " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())


def leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """The (path, value) pairs of a nested dict, in key order."""
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in leaves(item, f"{path}.{key}" if path else key)]
    return [(path, value)]


def space_leaves(space: Space[Any], path: str = "") -> list[tuple[str, Space[Any]]]:
    """The (path, space) pairs of a nested Dict space, in key order."""
    if isinstance(space, Dict):
        return [
            leaf for key, sub in space.spaces.items() for leaf in space_leaves(sub, f"{path}.{key}" if path else key)
        ]
    return [(path, space)]


def describe(value: Any) -> tuple[str, str, str, str]:
    """(type, shape, dtype, short value) of a sample leaf."""
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            shown = np.array2string(value, precision=2, separator=" ").replace("\n", "")
        else:
            shown = f"{value.size} values in [{number(value.min())}, {number(value.max())}]"
        return "ndarray", str(value.shape), str(value.dtype), shown
    if isinstance(value, np.generic):
        return type(value).__name__, "()", str(value.dtype), str(value)
    if isinstance(value, str):
        return "str", f"len {len(value)}", "-", repr(value)
    if isinstance(value, tuple):
        items = ", ".join(type(item).__name__ for item in value)
        return "tuple", f"{len(value)} items", "-", f"({items})"
    return type(value).__name__, "-", "-", repr(value)


def number(x: np.generic) -> str:
    return f"{x:.2f}" if isinstance(x, np.floating) else str(x)


def same(a: Any, b: Any) -> bool:
    """Whether two nested samples are equal, leaf by leaf."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return bool(a == b)


def make_observation_space() -> Dict:
    """The observation space of an imaginary robot: a camera, its state, a mission and nearby objects."""
    return Dict(
        camera=Box(0, 255, (16, 16, 3), np.uint8),
        state=Dict(
            position=Box(-1.0, 1.0, (3,), np.float32),
            gear=Discrete(5, start=1),
            buttons=MultiBinary(4),
            joystick=MultiDiscrete([3, 3]),
        ),
        mission=Text(20, min_length=4, charset="abcdefghijklmnopqrstuvwxyz "),
        objects=Sequence(Box(-10.0, 10.0, (2,), np.float32), stack=True),
    )


def show_space(observation_space: Dict) -> None:
    heading(1, "A nested observation space")
    table([(path, repr(space)) for path, space in space_leaves(observation_space)], ("key", "space"))


def show_sample(observation_space: Dict) -> dict[str, Any]:
    heading(2, "A seeded sample (seed=42)")
    observation_space.seed(42)
    observation = observation_space.sample()
    table(
        [(path, *describe(value)) for path, value in leaves(observation)],
        ("key", "type", "shape", "dtype", "value"),
    )
    print(f"   in the space: {observation_space.contains(observation)}")
    return observation


def show_masks() -> None:
    heading(3, "Masks: sampling only allowed actions")
    action_space = Discrete(5, start=1, seed=0)
    mask = np.array([0, 1, 0, 1, 1], dtype=np.int8)
    allowed = [int(action_space.start + i) for i in np.flatnonzero(mask)]
    actions = [int(action_space.sample(mask=mask)) for _ in range(12)]
    table(
        [
            ("action space", repr(action_space)),
            ("mask", str(mask.tolist())),
            ("allowed actions", str(allowed)),
            ("12 masked samples", str(actions)),
        ]
    )


def show_flatten(observation_space: Dict, observation: dict[str, Any]) -> None:
    heading(4, "Flatten: one vector for a network")
    state_space, state = observation_space["state"], observation["state"]
    vector = flatten(state_space, state)
    flat_space = flatten_space(state_space)
    table(
        [
            ("flatdim(state)", str(flatdim(state_space))),
            (
                "flatten_space(state)",
                f"{type(flat_space).__name__} of shape {flat_space.shape}, {flat_space.dtype}",
            ),
            ("flatten(state, x)", np.array2string(vector, precision=2, max_line_width=200)),
            ("unflatten round trip", f"equal to x: {same(unflatten(state_space, vector), state)}"),
        ]
    )
    try:
        flatdim(observation_space)
    except NotFlattenableError as error:
        print("   The whole space holds a Sequence, which has no fixed size, so flatdim refuses it:")
        text = f"{type(error).__name__}: {error}"
        print(textwrap.fill(text, width=100, initial_indent="     ", subsequent_indent="     "))


def show_batching(observation_space: Dict) -> None:
    heading(5, f"Batching for {NUM_ENVS} environments")
    batched_space = batch_space(observation_space, NUM_ENVS)
    samples = tuple(observation_space.sample() for _ in range(NUM_ENVS))
    batch = concatenate(observation_space, samples, create_empty_array(observation_space, NUM_ENVS))
    batch_leaves = dict(leaves(batch))
    table(
        [
            (path, type(space).__name__, *describe(batch_leaves[path])[:3])
            for path, space in space_leaves(batched_space)
        ],
        ("key", "batched space", "batch type", "shape", "dtype"),
    )
    unbatched = tuple(iterate(batched_space, batch))
    print(f"   iterate gives back {len(unbatched)} samples, equal to the originals: {same(unbatched, samples)}")
    print(f"   the batch is in the batched space: {batched_space.contains(batch)}")


def main() -> None:
    print("vecspaces spaces tour")
    print("=====================")
    observation_space = make_observation_space()
    show_space(observation_space)
    observation = show_sample(observation_space)
    show_masks()
    show_flatten(observation_space, observation)
    show_batching(observation_space)


if __name__ == "__main__":
    main()
