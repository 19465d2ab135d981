"""Fast frozen-dataclass helpers give exactly what dataclasses.replace and the constructor give."""

from __future__ import annotations

import dataclasses
import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.frozen import build, evolve
from jellybit.core.links import LinkStatus, LinkUpdate
from jellybit.core.records import PlanItem, Role

ITEM = PlanItem("Show/Season 01/Show.S01E01.mkv", 10, Role.VIDEO, season=1, episodes=(1,))
texts = st.none() | st.text(max_size=20)
changes = st.fixed_dictionaries({}, optional={
    "library": texts, "target": texts, "status": texts, "note": texts,
    "season": st.none() | st.integers(), "episodes": st.tuples(st.integers()),
})


@given(changes)
def test_evolve_is_dataclasses_replace(fields):
    fast, slow = evolve(ITEM, **fields), dataclasses.replace(ITEM, **fields)
    assert fast == slow
    assert hash(fast) == hash(slow)
    assert repr(fast) == repr(slow)
    assert ITEM == PlanItem("Show/Season 01/Show.S01E01.mkv", 10, Role.VIDEO, season=1, episodes=(1,))


def test_evolve_keeps_the_copy_frozen_and_refuses_unknown_fields():
    copy = evolve(ITEM, status="planned")
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.status = "exists"  # type: ignore[misc]
    with pytest.raises(TypeError, match="statuss"):
        evolve(ITEM, statuss="planned")
    assert ITEM.status is None


def test_build_is_the_constructor():
    values = (7, LinkStatus.PENDING, 12, "a message")
    assert build(LinkUpdate, values) == LinkUpdate(*values)
    assert build(LinkUpdate, list(values)).status is LinkStatus.PENDING
    with pytest.raises(TypeError, match="4 values"):
        build(LinkUpdate, values[:-1])


@dataclasses.dataclass(frozen=True)
class _Checked:
    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError("negative")


@dataclasses.dataclass(frozen=True)
class _Cached:
    value: int

    @functools.cached_property
    def double(self) -> int:
        return self.value * 2


def test_classes_with_their_own_logic_take_the_normal_path():
    with pytest.raises(ValueError, match="negative"):
        evolve(_Checked(1), value=-1)
    with pytest.raises(ValueError, match="negative"):
        build(_Checked, [-1])
    cached = _Cached(1)
    assert cached.double == 2
    assert evolve(cached, value=5).double == 10


@given(changes, changes)
def test_plan_items_compare_field_by_field(first, second):
    """PlanItem's own __eq__ (one dictionary comparison) agrees with comparing every field in order."""
    a, b = evolve(ITEM, **first), dataclasses.replace(ITEM, **second)
    assert (a == b) is (dataclasses.astuple(a) == dataclasses.astuple(b))
    assert (a != b) is not (a == b)
    if a == b:
        assert hash(a) == hash(b)
    assert a != dataclasses.astuple(a)
    assert (a == ITEM) is (dataclasses.astuple(a) == dataclasses.astuple(ITEM))
