"""Batching infos whose envs disagree on the kind of a key's value."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from vecspaces.vector.infos import add_info


def _batch(*env_infos: dict[str, Any]) -> dict[str, Any]:
    infos: dict[str, Any] = {}
    for index, info in enumerate(env_infos):
        add_info(infos, info, index, num_envs=len(env_infos) + 1)
    return infos


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"stats": {"kills": 3, "deep": {"hp": 1.5}}}, {"stats": 7}),
        ({"stats": 7}, {"stats": {"kills": 3}}),
        ({"stats": np.arange(2)}, {"stats": {"kills": 3}}),
        ({"stats": "text"}, {"stats": {"kills": 3}}),
        ({"stats": {"kills": 3}}, {"stats": np.arange(2)}),
    ],
)
def test_a_key_reported_as_a_dict_and_as_a_value_holds_each_envs_own_value(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    infos = _batch(first, second, {})

    stats = infos["stats"]
    assert stats.dtype == object and stats.shape == (4,)
    for index, info in enumerate((first, second)):
        expected, got = info["stats"], stats[index]
        if isinstance(expected, dict):
            assert got == expected
        else:
            np.testing.assert_array_equal(got, expected)
    assert stats[2] is None and stats[3] is None
    assert infos["_stats"].tolist() == [True, True, False, False]


def test_a_third_env_adds_to_the_object_array_whichever_kind_it_reports() -> None:
    infos = _batch({"stats": {"kills": 3}}, {"stats": 7}, {"stats": {"kills": 4}}, {"stats": 2.5})

    assert infos["stats"].tolist() == [{"kills": 3}, 7, {"kills": 4}, 2.5, None]
    assert infos["_stats"].tolist() == [True, True, True, True, False]


def test_keys_every_env_reports_as_dicts_stay_nested() -> None:
    infos = _batch({"stats": {"kills": 3}}, {"stats": {"kills": 4}})

    assert infos["stats"]["kills"].tolist() == [3, 4, 0]
    assert infos["stats"]["_kills"].tolist() == [True, True, False]
