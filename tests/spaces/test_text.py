"""Tests of the Text space and its operations (vecspaces.spaces.text, vecspaces._kernels.text)."""

from __future__ import annotations

import copy
import json
import pickle
import string
from collections import Counter
from typing import Any

import numpy as np
import pytest

from tests.helpers import same_rng_state, skip_before_gymnasium
from vecspaces.error import CustomSpaceError, InvalidTypeError, InvalidValueError
from vecspaces.spaces import Box, Text, Tuple, flatdim, flatten, flatten_space, unflatten
from vecspaces.spaces.text import alphanumeric
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
)

UNICODE_CHARSETS = ["αβγ", "🙂😀🚀", "日本語", "aé日🙂"]


def int8(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.int8)


# --- construction -------------------------------------------------------------------------------------------


def test_defaults() -> None:
    space = Text(5)
    assert (space.min_length, space.max_length) == (1, 5)
    assert space.character_set == alphanumeric
    assert space.character_list == tuple(sorted(string.ascii_letters + string.digits))
    assert space.characters == "".join(sorted(alphanumeric))
    assert space.shape is None
    assert space.dtype == np.dtype(str)
    assert space.is_np_flattenable is True


def test_set_charset_is_sorted() -> None:
    assert Text(3, charset={"z", "a", "m"}).character_list == ("a", "m", "z")
    assert Text(3, charset=frozenset("cba")).character_list == ("a", "b", "c")


@pytest.mark.parametrize("charset", ["cabca", ["c", "a", "b", "a"], ("c", "a", "b"), iter("cab")])
def test_other_charsets_keep_order_without_duplicates(charset: Any) -> None:
    space = Text(3, charset=charset)
    assert space.character_list == ("c", "a", "b")
    assert space.characters == "abc"
    assert space.character_set == frozenset("abc")


def test_numpy_string_charset_gives_plain_strings() -> None:
    space = Text(3, charset=np.array(["b", "a"]))
    assert space.character_list == ("b", "a")
    assert all(type(char) is str for char in space.character_list)


def test_lengths_accept_numpy_integers() -> None:
    space = Text(np.int64(4), min_length=np.int32(2))
    assert (space.min_length, space.max_length) == (2, 4)
    assert type(space.min_length) is int and type(space.max_length) is int


def test_zero_lengths_are_allowed() -> None:
    space = Text(0, min_length=0)
    assert space.sample() == ""
    assert "" in space and "a" not in space


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"max_length": 2.0}, InvalidTypeError, "max_length"),
        ({"max_length": True}, InvalidTypeError, "max_length"),
        ({"max_length": "5"}, InvalidTypeError, "max_length"),
        ({"max_length": 5, "min_length": 1.5}, InvalidTypeError, "min_length"),
        ({"max_length": -1, "min_length": 0}, InvalidValueError, "negative"),
        ({"max_length": 5, "min_length": -1}, InvalidValueError, "negative"),
        ({"max_length": 2, "min_length": 3}, InvalidValueError, "above max_length"),
        ({"max_length": 0}, InvalidValueError, "above max_length"),
        ({"max_length": 3, "charset": 5}, InvalidTypeError, "charset"),
        ({"max_length": 3, "charset": [1, 2]}, InvalidTypeError, "non-string"),
        ({"max_length": 3, "charset": {1, "a"}}, InvalidTypeError, "non-string"),
        ({"max_length": 3, "charset": ["ab", "c"]}, InvalidValueError, "single characters"),
        ({"max_length": 3, "charset": ["", "c"]}, InvalidValueError, "single characters"),
        ({"max_length": 3, "charset": ""}, InvalidValueError, "empty"),
        ({"max_length": 3, "charset": set()}, InvalidValueError, "empty"),
    ],
)
def test_constructor_errors(kwargs: dict[str, Any], error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        Text(**kwargs)


def test_constructor_errors_are_builtin_exceptions() -> None:
    with pytest.raises(ValueError):
        Text(3, charset="")
    with pytest.raises(TypeError):
        Text(3.0)


def test_character_index() -> None:
    space = Text(3, charset="cab")
    assert [space.character_index(c) for c in "cab"] == [0, 1, 2]
    assert type(space.character_index("b")) is np.int32
    with pytest.raises(InvalidValueError, match="'z'"):
        space.character_index("z")
    with pytest.raises(InvalidTypeError):
        space.character_index(0)  # type: ignore[arg-type]


# --- sampling -----------------------------------------------------------------------------------------------


def test_samples_are_strings_in_the_space() -> None:
    space = Text(6, min_length=2, seed=0)
    for _ in range(200):
        x = space.sample()
        assert type(x) is str and x in space


def test_every_length_and_character_is_reachable() -> None:
    space = Text(4, min_length=0, charset="abcdef", seed=1)
    draws = [space.sample() for _ in range(3000)]
    assert {len(x) for x in draws} == {0, 1, 2, 3, 4}
    assert set("".join(draws)) == set("abcdef")


def test_sampling_is_roughly_uniform() -> None:
    space = Text(10, min_length=1, charset="abcd", seed=2)
    draws = [space.sample() for _ in range(4000)]
    lengths = Counter(len(x) for x in draws)
    assert all(300 <= lengths[n] <= 500 for n in range(1, 11)), lengths
    chars = Counter("".join(draws))
    total = sum(chars.values())
    assert all(abs(chars[c] / total - 0.25) < 0.02 for c in "abcd"), chars


def test_same_seed_same_samples_and_generator_identity() -> None:
    a, b = Text(8, seed=42), Text(8, seed=42)
    assert [a.sample() for _ in range(20)] == [b.sample() for _ in range(20)]
    rng = np.random.default_rng(0)
    assert Text(3, seed=rng).np_random is rng
    assert a.seed(7) == 7


def test_mask_fixes_length_and_characters() -> None:
    space = Text(6, charset="abcde", seed=3)
    draws = [space.sample(mask=(4, int8(0, 1, 0, 1, 0))) for _ in range(300)]
    assert {len(x) for x in draws} == {4}
    assert set("".join(draws)) == {"b", "d"}


def test_mask_with_only_a_length_or_only_characters() -> None:
    space = Text(5, min_length=2, charset="xyz", seed=4)
    assert {len(space.sample(mask=(3, None))) for _ in range(50)} == {3}
    draws = [space.sample(mask=(None, int8(0, 0, 1))) for _ in range(300)]
    assert set("".join(draws)) == {"z"}
    assert {len(x) for x in draws} == {2, 3, 4, 5}
    assert all(x in space for x in (space.sample(mask=(None, None)) for _ in range(50)))


def test_numpy_integer_length_in_mask() -> None:
    space = Text(5, charset="ab", seed=0)
    assert len(space.sample(mask=(np.int64(2), None))) == 2
    assert len(space.sample(probability=(np.uint8(5), None))) == 5


def test_all_zero_mask() -> None:
    assert Text(5, min_length=0, charset="ab").sample(mask=(3, int8(0, 0))) == ""
    assert Text(5, min_length=0, charset="ab").sample(mask=(None, int8(0, 0))) == ""
    with pytest.raises(InvalidValueError, match="min_length"):
        Text(5, min_length=1, charset="ab").sample(mask=(None, int8(0, 0)))


def test_probability_respects_zero_and_proportions() -> None:
    space = Text(8, charset="abcd", seed=5)
    probability = np.array([0.7, 0.0, 0.3, 0.0])
    draws = [space.sample(probability=(8, probability)) for _ in range(500)]
    assert {len(x) for x in draws} == {8}
    chars = Counter("".join(draws))
    assert set(chars) == {"a", "c"}
    assert abs(chars["a"] / 4000 - 0.7) < 0.03


def test_probability_one_hot_at_the_ends() -> None:
    space = Text(4, charset="abc", seed=6)
    assert set("".join(space.sample(probability=(None, np.array([1.0, 0, 0]))) for _ in range(50))) == {"a"}
    assert set("".join(space.sample(probability=(None, np.array([0, 0, 1.0]))) for _ in range(50))) == {"c"}


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"mask": [3, None]}, InvalidTypeError, "not a tuple"),
        ({"mask": (3,)}, InvalidValueError, "two entries"),
        ({"mask": (3, None, None)}, InvalidValueError, "two entries"),
        ({"mask": (3.0, None)}, InvalidTypeError, "length"),
        ({"mask": (True, None)}, InvalidTypeError, "length"),
        ({"mask": (0, None)}, InvalidValueError, "out of range"),
        ({"mask": (6, None)}, InvalidValueError, "out of range"),
        ({"mask": (None, [1, 0, 1])}, InvalidTypeError, "not an array"),
        ({"mask": (None, np.array([1.0, 0.0, 1.0]))}, InvalidTypeError, "dtype"),
        ({"mask": (None, int8(1, 0))}, InvalidValueError, "shape"),
        ({"mask": (None, int8(1, 0, 2))}, InvalidValueError, "out of range"),
        ({"probability": 0.5}, InvalidTypeError, "not a tuple"),
        ({"probability": (None, np.array([0.5, 0.5, 0.5]))}, InvalidValueError, "sum"),
        ({"probability": (None, np.array([1.5, -0.5, 0.0]))}, InvalidValueError, r"\[0, 1\]"),
        ({"probability": (None, np.array([1, 0, 0]))}, InvalidTypeError, "dtype"),
        ({"probability": (None, np.array([0.5, 0.5]))}, InvalidValueError, "shape"),
        ({"probability": (9, None)}, InvalidValueError, "out of range"),
        ({"mask": (None, None), "probability": (None, None)}, InvalidValueError, "both"),
    ],
)
def test_invalid_mask_and_probability(kwargs: dict[str, Any], error: type[Exception], words: str) -> None:
    space = Text(5, charset="abc", seed=0)
    with pytest.raises(error, match=words):
        space.sample(**kwargs)


def test_invalid_mask_does_not_consume_randomness() -> None:
    space = Text(5, charset="abc", seed=0)
    state = copy.deepcopy(space.np_random.bit_generator.state)
    with pytest.raises(InvalidValueError):
        space.sample(mask=(9, None))
    assert space.np_random.bit_generator.state == state


# --- contains -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        ("ab", True),
        ("a", True),
        ("abcab", True),
        ("", False),
        ("abcabc", False),
        ("abd", False),
        ("AB", False),
        (np.str_("ab"), True),
        (b"ab", False),
        (["a", "b"], False),
        (("a",), False),
        (None, False),
        (3, False),
        (float("nan"), False),
        (np.array(["a"]), False),
        (object(), False),
    ],
)
def test_contains(x: Any, expected: bool) -> None:
    space = Text(5, charset="abc")
    assert space.contains(x) is expected
    assert (x in space) is expected


@pytest.mark.parametrize("charset", UNICODE_CHARSETS)
def test_unicode_charsets(charset: str) -> None:
    space = Text(5, min_length=0, charset=charset, seed=0)
    assert space.character_list == tuple(charset)
    draws = [space.sample() for _ in range(500)]
    assert all(x in space for x in draws)
    assert set("".join(draws)) == set(charset)
    for x in draws[:50]:
        assert unflatten(space, flatten(space, x)) == x
    assert (charset[0] + "?") not in space


def test_nul_and_combining_characters_are_single_code_points() -> None:
    space = Text(4, charset="\x00e\u0301", seed=0)
    x = "\x00e\u0301\x00"
    assert x in space
    assert unflatten(space, flatten(space, x)) == x
    with pytest.raises(InvalidValueError):
        Text(3, charset=["e\u0301"])  # two code points


# --- identity, copies, serialisation ------------------------------------------------------------------------


def test_repr() -> None:
    assert repr(Text(5)) == "Text(1, 5, charset=0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz)"
    assert repr(Text(4, min_length=0, charset="cba")) == "Text(0, 4, charset=abc)"
    assert repr(Text(2, charset="βα")) == "Text(1, 2, charset=αβ)"


def test_eq_compares_lengths_and_character_set_only() -> None:
    assert Text(5, charset="abc") == Text(5, charset="cba")
    assert Text(5, charset="abc") == Text(5, charset={"a", "b", "c"})
    assert Text(5, charset="abc") != Text(5, charset="abcd")
    assert Text(5, charset="abc") != Text(4, charset="abc")
    assert Text(5, charset="abc") != Text(5, min_length=0, charset="abc")
    assert Text(5) != "Text(1, 5)"


def test_pickle_and_deepcopy_keep_the_generator_state() -> None:
    space = Text(6, charset="αβγ", seed=3)
    space.sample()
    for clone in (pickle.loads(pickle.dumps(space)), copy.deepcopy(space)):
        assert clone == space and clone.character_list == space.character_list
        assert same_rng_state(clone.np_random, space.np_random)
        assert clone.np_random is not space.np_random
    clone = pickle.loads(pickle.dumps(space))
    assert [clone.sample() for _ in range(5)] == [space.sample() for _ in range(5)]


def test_jsonable_round_trip() -> None:
    space = Text(5, charset="日本🙂", seed=0)
    batch = [space.sample() for _ in range(4)]
    data = json.loads(json.dumps(space.to_jsonable(batch)))
    assert space.from_jsonable(data) == batch


# --- flatten family -----------------------------------------------------------------------------------------


def test_flatdim_and_flatten_space() -> None:
    space = Text(7, charset="cab")
    assert flatdim(space) == 7
    assert flatten_space(space) == Box(0, 3, (7,), np.int32)


def test_flatten_layout() -> None:
    space = Text(5, charset="cab")
    flat = flatten(space, "bc")
    assert flat.dtype == np.int32
    assert flat.tolist() == [2, 0, 3, 3, 3]
    assert flatten(space, "").tolist() == [3] * 5
    flat[0] = 1  # the result is the caller's own array, not a shared template
    assert flatten(space, "").tolist() == [3] * 5


def test_flatten_is_in_flatten_space_and_round_trips() -> None:
    space = Text(6, min_length=0, charset="xyz😀", seed=9)
    flat_space = flatten_space(space)
    for _ in range(100):
        x = space.sample()
        flat = flatten(space, x)
        assert flat in flat_space
        assert unflatten(space, flat) == x


def test_flatten_errors() -> None:
    space = Text(3, charset="ab")
    with pytest.raises(InvalidValueError, match="at most 3 characters") as info:
        flatten(space, "abab")
    assert "4 characters" in str(info.value)
    with pytest.raises(InvalidValueError, match="'z'"):
        flatten(space, "az")
    with pytest.raises(InvalidTypeError, match="str"):
        flatten(space, ["a"])


@pytest.mark.parametrize("length", [16, 17, 40], ids=["short", "just_long", "long"])
def test_flatten_short_and_long_strings(length: int) -> None:
    space = Text(50, charset="ab")
    x = "ab" * (length // 2) + "a" * (length % 2)
    flat = flatten(space, x)
    assert flat.tolist() == [0, 1] * (length // 2) + [0] * (length % 2) + [2] * (50 - length)
    assert unflatten(space, flat) == x
    with pytest.raises(InvalidValueError, match="'z'"):
        flatten(space, x[:-1] + "z")


def test_unflatten_skips_padding_anywhere() -> None:
    space = Text(4, charset="ab")
    assert unflatten(space, np.array([0, 2, 1, 2], dtype=np.int32)) == "ab"
    assert unflatten(space, np.array([2, 2, 2, 9], dtype=np.int64)) == ""


def test_unflatten_accepts_whole_floats() -> None:
    space = Text(3, charset="ab")
    assert unflatten(space, np.array([1.0, 0.0, 2.0])) == "ba"


@pytest.mark.parametrize(
    ("x", "error"),
    [
        (np.array([0, -1, 2]), InvalidValueError),
        (np.array([0, 1]), InvalidValueError),
        (np.array([0.5, 1.0, 2.0]), InvalidValueError),
        (np.array(["a", "b", "c"]), InvalidTypeError),
        (np.zeros((1, 3), dtype=np.int32), InvalidTypeError),
        ([0, 1, 2], InvalidTypeError),
    ],
)
def test_unflatten_errors(x: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        unflatten(Text(3, charset="ab"), x)


def test_is_space_dtype_shape_equiv() -> None:
    space = Text(5, charset="abc")
    assert is_space_dtype_shape_equiv(space, Text(5, min_length=0, charset="cab"))
    assert not is_space_dtype_shape_equiv(space, Text(6, charset="abc"))
    assert not is_space_dtype_shape_equiv(space, Text(5, charset="abcd"))
    assert not is_space_dtype_shape_equiv(space, Box(0, 3, (5,), np.int32))


# --- batching family ----------------------------------------------------------------------------------------


def test_batch_space_is_a_tuple_of_independent_copies() -> None:
    space = Text(6, charset="abcdefgh", seed=0)
    before = copy.deepcopy(space.np_random.bit_generator.state)
    batched = batch_space(space, 3)
    assert isinstance(batched, Tuple) and len(batched) == 3
    assert all(sub == space and sub is not space for sub in batched)
    assert space.np_random.bit_generator.state == before
    streams = [tuple(sub.sample() for _ in range(5)) for sub in batched]
    assert len(set(streams)) == 3
    assert all(x in batched for x in [batched.sample() for _ in range(5)])


def test_batch_space_is_reproducible() -> None:
    a = batch_space(Text(5, seed=1), 2)
    b = batch_space(Text(5, seed=1), 2)
    assert [a.sample() for _ in range(5)] == [b.sample() for _ in range(5)]


def test_batch_space_rejects_bad_sizes() -> None:
    with pytest.raises(InvalidValueError):
        batch_space(Text(3), -1)


def test_batch_differing_spaces() -> None:
    spaces = [Text(3, charset="ab", seed=5), Text(4, min_length=0, charset="xyz")]
    batched = batch_differing_spaces(spaces)
    assert isinstance(batched, Tuple)
    assert list(batched) == spaces
    assert batched[0] is not spaces[0]
    assert same_rng_state(batched.np_random, spaces[0].np_random)
    assert batched.np_random is not spaces[0].np_random


def test_concatenate_returns_a_tuple_of_the_items() -> None:
    space = Text(3, charset="ab")
    out = create_empty_array(space, 2)
    assert concatenate(space, iter(["a", "bb"]), out) == ("a", "bb")
    assert concatenate(space, ["a", "b", "ab"], None) == ("a", "b", "ab")
    with pytest.raises(InvalidValueError, match="2 items"):
        concatenate(space, ["a", "b", "ab"], out)
    with pytest.raises(InvalidTypeError, match=r"items\[1\]"):
        concatenate(space, ["a", 3], out)


@pytest.mark.parametrize("fn", [np.zeros, np.empty])
def test_create_empty_array_holds_values_of_the_space(fn: Any) -> None:
    space = Text(5, min_length=2, charset="zyx")
    empty = create_empty_array(space, 3, fn)
    assert empty == ("xx", "xx", "xx")  # the first character of the sorted charset, as Gymnasium
    assert all(x in space for x in empty)
    assert create_empty_array(Text(5, min_length=0), 2) == ("", "")
    assert create_empty_array(Text(2), 1) == ("0",)


def test_iterate_is_only_for_the_batched_space() -> None:
    space = Text(3, charset="ab")
    with pytest.raises(CustomSpaceError, match="batch_space"):
        iterate(space, ("a", "b"))
    assert list(iterate(batch_space(space, 2), ("a", "bb"))) == ["a", "bb"]


# --- against Gymnasium --------------------------------------------------------------------------------------

CHARSETS = ["abc", "cba", {"z", "a", "m"}, "αβγ", "日本語🙂é"]
CHARSET_IDS = ["abc", "cba", "set", "greek", "mixed"]


def gym_text(max_length: int, min_length: int, charset: Any) -> Any:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    return gym_spaces.Text(max_length, min_length=min_length, charset=charset)


@pytest.mark.parametrize("charset", CHARSETS, ids=CHARSET_IDS)
def test_same_characters_repr_and_flat_form_as_gymnasium(charset: Any) -> None:
    if isinstance(charset, set):
        skip_before_gymnasium((1, 4), "a set charset keeps the set's iteration order instead of sorting it")
    theirs, ours = gym_text(5, 0, charset), Text(5, min_length=0, charset=charset, seed=0)
    assert ours.character_list == theirs.character_list
    assert ours.characters == theirs.characters
    assert repr(ours) == repr(theirs)
    assert [ours.character_index(c) for c in ours.character_list] == [
        theirs.character_index(c) for c in ours.character_list
    ]
    gym_utils = pytest.importorskip("gymnasium.spaces.utils")
    assert flatdim(ours) == gym_utils.flatdim(theirs)
    for _ in range(30):
        x = ours.sample()
        flat = flatten(ours, x)
        expected = gym_utils.flatten(theirs, x)
        assert flat.dtype == expected.dtype and flat.tolist() == expected.tolist()
        assert unflatten(ours, flat) == gym_utils.unflatten(theirs, flat) == x


@pytest.mark.parametrize("charset", CHARSETS, ids=CHARSET_IDS)
def test_contains_agrees_with_gymnasium(charset: Any) -> None:
    theirs, ours = gym_text(4, 1, charset), Text(4, min_length=1, charset=charset)
    chars = "".join(ours.character_list)
    candidates = [
        "",
        chars[0],
        chars[:4],
        chars * 3,
        chars[0] + "?",
        "abc",
        "ABC",
        np.str_(chars[0]),
        b"a",
        1,
        None,
    ]
    for x in candidates:
        assert ours.contains(x) == theirs.contains(x), x
    theirs.seed(0)
    for _ in range(50):
        assert ours.contains(theirs.sample())


def test_eq_semantics_match_gymnasium() -> None:
    pairs = [("abc", "cba"), ("abc", "abcd"), ("ab", {"a", "b"})]
    for a, b in pairs:
        assert (Text(3, charset=a) == Text(3, charset=b)) == (gym_text(3, 1, a) == gym_text(3, 1, b))
