"""Gymnasium spaces as the children of vecspaces composites: converted once, at construction or assignment.

Every composite kind takes its children through one door (``vecspaces.spaces._container.adopt_child``): the
Tuple and OneOf items, the Dict children in all three forms (mapping, pairs, keywords) and ``__setitem__``,
the Sequence feature space, the Graph node and edge spaces. Each form is checked with Gymnasium forms of
catalog spaces (mixed with a vecspaces sibling, as in a user's module that swapped one import), with a custom
Gymnasium kind, and with values that are no space at all.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.catalog import make
from tests.helpers import assert_same_value, same_rng_state, skip_before_gymnasium
from vecspaces._ops.gymnasium import GymnasiumCustomSpace
from vecspaces.error import InvalidTypeError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    Graph,
    MultiBinary,
    OneOf,
    Sequence,
    Space,
    Tuple,
    flatdim,
    to_gymnasium,
)
from vecspaces.spaces._container import Container

gym = pytest.importorskip("gymnasium.spaces")

# Catalog spaces used as children: every built-in kind, odd dtypes and starts, and nested composites.
CHILD_IDS = [
    "box_f32",
    "box_uint8_image",
    "box_int_inf",
    "discrete_neg",
    "multibinary_2d",
    "multidiscrete_start",
    "text_unicode",
    "tuple_nested",
    "dict_nested",
    "sequence_stack_box",
    "graph",
    "oneof_mixed",
]


def _setitem(children: list[Any], seed: int | None) -> Dict:
    space = Dict()
    for index, child in enumerate(children):
        space[f"c{index}"] = child
    if seed is not None:
        space.seed(seed)
    return space


# How each composite form is built from a list of children: (children, seed) -> composite. The forms that
# take several children get a Gymnasium child and a vecspaces sibling; the others use the first child only.
FORMS: dict[str, Callable[[list[Any], int | None], Space[Any]]] = {
    "tuple": lambda children, seed: Tuple(children, seed=seed),
    "dict_mapping": lambda children, seed: Dict({f"c{i}": child for i, child in enumerate(children)}, seed=seed),
    "dict_pairs": lambda children, seed: Dict([(f"c{i}", child) for i, child in enumerate(children)], seed=seed),
    "dict_keywords": lambda children, seed: Dict(seed=seed, **{f"c{i}": child for i, child in enumerate(children)}),
    "dict_setitem": _setitem,
    "sequence": lambda children, seed: Sequence(children[0], seed=seed),
    "oneof": lambda children, seed: OneOf(children, seed=seed),
    "graph_nodes": lambda children, seed: Graph(children[0], Discrete(3), seed=seed),
    "graph_edges": lambda children, seed: Graph(Box(0.0, 1.0, (2,)), children[0], seed=seed),
}

# Where each form's first child is found, and what a non-space there is called in the error message.
FIRST_CHILD: dict[str, Callable[[Any], Any]] = {
    "tuple": lambda space: space[0],
    "dict_mapping": lambda space: space["c0"],
    "dict_pairs": lambda space: space["c0"],
    "dict_keywords": lambda space: space["c0"],
    "dict_setitem": lambda space: space["c0"],
    "sequence": lambda space: space.feature_space,
    "oneof": lambda space: space.spaces[0],
    "graph_nodes": lambda space: space.node_space,
    "graph_edges": lambda space: space.edge_space,
}
ERROR_AT = {
    "tuple": r"Tuple child is not a space, .* at spaces\[0\]$",
    "dict_mapping": r"Dict child 'c0' is not a space",
    "dict_pairs": r"Dict child 'c0' is not a space",
    "dict_keywords": r"Dict child 'c0' is not a space",
    "dict_setitem": r"Dict child 'c0' is not a space",
    "sequence": r"Sequence feature space is not a space",
    "oneof": r"OneOf holds something that is not a space, .* at spaces\[0\]$",
    "graph_nodes": r"Graph node space is not a space",
    "graph_edges": r"Graph edge space is not a space",
}


def sibling() -> Space[Any]:
    """The vecspaces child that sits next to the Gymnasium one."""
    return Discrete(3, start=-1)


def nested(space: Space[Any]) -> list[Space[Any]]:
    """The spaces directly inside ``space``."""
    if isinstance(space, Container):
        return list(space.children())
    if isinstance(space, Sequence):
        return [space.feature_space]
    if isinstance(space, OneOf):
        return list(space.spaces)
    if isinstance(space, Graph):
        return [space.node_space] + ([] if space.edge_space is None else [space.edge_space])
    return []


def all_vecspaces(space: Any) -> bool:
    """Whether ``space`` and every space nested in it are vecspaces spaces of built-in kinds."""
    built_in = isinstance(space, Space) and type(space).__module__.startswith("vecspaces.spaces.")
    return built_in and all(all_vecspaces(child) for child in nested(space))


def build_pair(form: str, child_id: str, seed: int | None) -> tuple[Space[Any], Space[Any]]:
    """The composite of ``form`` built from the Gymnasium form of a catalog child, and from the vecspaces one."""
    gym_child = to_gymnasium(make(child_id))
    with_gym = FORMS[form]([gym_child, sibling()], seed)
    expected = FORMS[form]([make(child_id), sibling()], seed)
    return with_gym, expected


@pytest.fixture(params=list(FORMS))
def form(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# --- built-in Gymnasium kinds ---------------------------------------------------------------------------------


@pytest.mark.parametrize("child_id", CHILD_IDS)
def test_a_gymnasium_child_gives_the_same_composite(form: str, child_id: str) -> None:
    with_gym, expected = build_pair(form, child_id, None)
    assert with_gym == expected
    assert all_vecspaces(with_gym), repr(with_gym)
    first = FIRST_CHILD[form](with_gym)
    assert isinstance(first, Space) and first == make(child_id)  # converted, not held
    for _ in range(3):
        assert with_gym.contains(with_gym.sample())


@pytest.mark.parametrize("child_id", CHILD_IDS)
def test_seeded_samples_equal_those_of_the_all_vecspaces_composite(form: str, child_id: str) -> None:
    with_gym, expected = build_pair(form, child_id, 7)
    for _ in range(3):
        assert_same_value(with_gym.sample(), expected.sample())
    # Reseeding afterwards reproduces the same streams too.
    assert_same_value(with_gym.seed(11), expected.seed(11))
    assert_same_value(with_gym.sample(), expected.sample())


@pytest.mark.parametrize("child_id", ["box_f32", "discrete_neg", "text_unicode", "dict_nested"])
def test_a_composite_without_seed_samples_from_its_children(child_id: str) -> None:
    # The converted child starts from a copy of the Gymnasium space's generator: a Tuple or Dict (whose own
    # generator draws nothing) built without a seed samples what the same-seeded vecspaces children give.
    space = make(child_id)
    space.seed(5)
    gym_child = to_gymnasium(space)
    vec_child = make(child_id)
    vec_child.seed(5)
    for build in (lambda c: Tuple((c, Discrete(4, seed=1))), lambda c: Dict(a=c, b=Discrete(4, seed=1))):
        with_gym, expected = build(gym_child), build(vec_child)
        vec_child.seed(5)
        for _ in range(3):
            assert_same_value(with_gym.sample(), expected.sample())


def test_the_converted_child_has_a_copy_of_the_gymnasium_generator(form: str) -> None:
    gym_child = gym.Box(-1.0, 1.0, (3,), np.float32, seed=4)
    composite = FORMS[form]([gym_child, sibling()], None)
    child = FIRST_CHILD[form](composite)
    assert same_rng_state(child.np_random, gym_child.np_random)
    before = gym_child.sample()
    gym_child.seed(4)
    child.sample()  # drawing from the copy leaves the Gymnasium space's generator where it was
    assert_same_value(gym_child.sample(), before)
    assert child.np_random is not gym_child.np_random


def test_dict_setitem_replaces_a_child_with_a_converted_gymnasium_space() -> None:
    space = Dict(a=Discrete(2), b=Box(0.0, 1.0, (2,)))
    assert flatdim(space) == 4  # fills the kernel cache, which the assignment must clear
    space["a"] = gym.MultiBinary(4)
    assert flatdim(space) == 6
    assert space == Dict(a=MultiBinary(4), b=Box(0.0, 1.0, (2,)))
    assert isinstance(space["a"], MultiBinary)
    assert list(space) == ["a", "b"]
    assert space.contains(space.sample())


def test_a_gymnasium_dict_as_the_mapping_keeps_its_key_order() -> None:
    gym_dict = gym.Dict(OrderedDict([("z", gym.Discrete(2)), ("a", gym.Box(0.0, 1.0, (2,)))]))
    space = Dict(gym_dict, extra=Discrete(3))
    assert list(space) == ["z", "a", "extra"]  # as for a vecspaces Dict, and as from_gymnasium keeps it
    assert all_vecspaces(space)


def test_a_stacked_sequence_of_a_gymnasium_feature_space() -> None:
    gym_feature = gym.Dict(x=gym.Box(-1.0, 1.0, (2,)), k=gym.Discrete(4))
    space = Sequence(gym_feature, stack=True, seed=3)
    expected = Sequence(Dict(x=Box(-1.0, 1.0, (2,)), k=Discrete(4)), stack=True, seed=3)
    assert space == expected and space.stacked_feature_space == expected.stacked_feature_space
    for _ in range(3):
        value = space.sample()
        assert_same_value(value, expected.sample())
        assert space.contains(value)


def test_nested_a_gymnasium_tuple_of_a_gymnasium_box_in_a_vecspaces_dict() -> None:
    gym_tuple = gym.Tuple((gym.Box(-2.0, 2.0, (3,)), gym.Discrete(5, start=2)))
    space = Dict(inner=gym_tuple, flag=MultiBinary(2), seed=9)
    expected = Dict(inner=Tuple((Box(-2.0, 2.0, (3,)), Discrete(5, start=2))), flag=MultiBinary(2), seed=9)
    assert space == expected
    inner = space["inner"]
    assert isinstance(inner, Tuple) and isinstance(inner[0], Box) and isinstance(inner[1], Discrete)
    for _ in range(3):
        value = space.sample()
        assert space.contains(value)
        assert_same_value(value, expected.sample())
    back = to_gymnasium(space)
    assert isinstance(back, gym.Dict) and isinstance(back["inner"], gym.Tuple) and isinstance(back["inner"][0], gym.Box)


# --- a custom Gymnasium kind ----------------------------------------------------------------------------------


class Coin(gym.Space):  # type: ignore[misc]
    """A custom Gymnasium space kind, with no vecspaces counterpart."""

    def sample(self, mask: Any = None, probability: Any = None) -> int:
        return int(self.np_random.integers(2))

    def contains(self, x: Any) -> bool:
        return isinstance(x, int) and x in (0, 1)


def test_a_custom_gymnasium_child_is_held_and_given_back(form: str) -> None:
    if form.startswith("graph"):
        skip_before_gymnasium((1, 4), "a Graph's node and edge spaces are Box or Discrete only")
    coin = Coin()
    composite = FORMS[form]([coin, sibling()], 2)
    child = FIRST_CHILD[form](composite)
    assert isinstance(child, GymnasiumCustomSpace) and child.space is coin
    assert child.contains(1) and not child.contains(2)
    for _ in range(3):
        assert composite.contains(composite.sample())
    back = to_gymnasium(composite)
    assert isinstance(back, gym.Space) and not isinstance(back, Space)
    assert FIRST_CHILD[form](back) is coin


def test_a_composite_seeds_a_custom_gymnasium_child_deterministically(form: str) -> None:
    coin = Coin()
    first = FORMS[form]([coin, sibling()], 6)
    samples = [first.sample() for _ in range(4)]
    again = FORMS[form]([coin, sibling()], 6)  # reseeds the same Gymnasium space the same way
    for value in samples:
        assert_same_value(again.sample(), value)


def test_a_custom_gymnasium_child_is_a_leaf_of_the_composite() -> None:
    coin = Coin(seed=0)
    space = Tuple((coin, Discrete(2)))
    value = space.sample()
    assert space.contains(value) and coin.contains(value[0])
    assert not space.contains((2, value[1]))  # the custom space's contains decides its part


# --- no space at all ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["Box(0, 1)", 3, Box, None], ids=["str", "int", "the_class_Box", "none"])
def test_a_non_space_child_is_refused_where_it_is(form: str, bad: Any) -> None:
    if bad is None and form == "graph_edges":
        assert Graph(Discrete(2), None).edge_space is None  # None is a valid edge space: no edges
        return
    with pytest.raises(InvalidTypeError, match=ERROR_AT[form]) as caught:
        FORMS[form]([bad, sibling()], None)
    assert repr(bad) in str(caught.value) or type(bad).__name__ in str(caught.value)


@pytest.mark.parametrize("form_name", ["tuple", "oneof", "dict_mapping", "dict_setitem"])
def test_the_path_names_the_offending_child(form_name: str) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        FORMS[form_name]([gym.Discrete(2), gym.Box], None)  # a Gymnasium class is no space either
    text = str(caught.value)
    assert ("spaces[1]" in text) if form_name in ("tuple", "oneof") else ("'c1'" in text)


def test_a_failed_setitem_leaves_the_dict_unchanged() -> None:
    space = Dict(a=Discrete(2))
    with pytest.raises(InvalidTypeError, match="Dict child 'b' is not a space"):
        space["b"] = "Discrete(2)"  # type: ignore[assignment]
    assert list(space) == ["a"]
