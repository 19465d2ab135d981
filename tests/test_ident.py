"""Identifiers: single and bulk ULIDs are valid, unique, ordered and readable by the ULID library."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st
from ulid import ULID

from jellybit import ident


def test_new_ids_are_valid_unique_and_in_order() -> None:
    before = time.time()
    ids = ident.new_ids(5000)
    after = time.time()
    assert len(ids) == len(set(ids)) == 5000
    assert ids == sorted(ids)
    assert all(ident.is_id(i) and len(i) == 26 and i == i.lower() for i in ids)
    parsed = [ULID.from_str(i.upper()) for i in ids]
    assert all(before - 0.002 <= u.timestamp <= after + 0.002 for u in parsed)
    values = [int(u) for u in parsed]
    assert values == list(range(values[0], values[0] + 5000))    # consecutive: one start, counted up


def test_new_ids_of_nothing_and_one() -> None:
    assert ident.new_ids(0) == []
    assert ident.new_ids(-3) == []
    [one] = ident.new_ids(1)
    assert ident.is_id(one)


def test_bulk_ids_sort_after_earlier_ids_by_time() -> None:
    first = ident.new_id()
    time.sleep(0.002)
    bulk = ident.new_ids(3)
    time.sleep(0.002)
    last = ident.new_id()
    assert first < bulk[0] < bulk[-1] < last


@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_encoding_matches_the_ulid_library(value: int) -> None:
    assert ident._encode(value) == str(ULID.from_int(value)).lower()
