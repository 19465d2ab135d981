"""Reading qBittorrent's torrent states, and the index the worker matches downloads with."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.ports import TorrentInfo
from jellybit.core.torrent_state import (
    TorrentIndex,
    can_stall,
    is_complete,
    is_error,
    lacks_metadata,
    near_completion,
)

BASE = TorrentInfo(hash="a" * 40, infohash_v1="a" * 40, infohash_v2="", name="x", state="downloading",
                   progress=0.5, dlspeed=10, eta=60, size=100, total_size=100, amount_left=50,
                   content_path="/d/x", save_path="/d", category="jellybit", tags=(), added_on=10,
                   completion_on=None)


@pytest.mark.parametrize(("state", "progress", "size", "error", "meta", "complete", "stall"), [
    ("downloading", 0.5, 100, False, False, False, True),
    ("stalledDL", 0.5, 100, False, False, False, True),
    ("error", 0.5, 100, True, False, False, False),
    ("missingFiles", 1, 100, True, False, False, False),
    ("metaDL", 0, 0, False, True, False, False),
    ("forcedMetaDL", 0, 0, False, True, False, False),
    ("pausedDL", 0, 0, False, True, False, False),          # a paused magnet: still no metadata
    ("pausedDL", 0.3, 100, False, False, False, False),     # paused by a human: never "stalled"
    ("stalledUP", 1, 100, False, False, True, False),
    ("pausedUP", 1, 100, False, False, True, False),
    ("stoppedUP", 1, 100, False, False, True, False),       # qBittorrent 5.x name
    ("moving", 1, 100, False, False, False, False),         # complete but being moved: wait
    ("checkingUP", 1, 100, False, False, False, False),
    ("checkingResumeData", 1, 100, False, False, False, False),
])
def test_states(state: str, progress: float, size: int, error: bool, meta: bool, complete: bool,
                stall: bool) -> None:
    torrent = replace(BASE, state=state, progress=progress, size=size, total_size=size)
    assert (is_error(torrent), lacks_metadata(torrent), is_complete(torrent), can_stall(torrent)) == (
        error, meta, complete, stall)


@pytest.mark.parametrize(("changes", "limit", "near"), [
    ({"eta": 5, "dlspeed": 1000}, 10.0, True),
    ({"eta": 10, "dlspeed": 1000}, 10.0, True),
    ({"eta": 11, "dlspeed": 1000}, 10.0, False),
    ({"eta": 5, "dlspeed": 0}, 10.0, False),                        # no speed: no real estimate
    ({"eta": 8640000, "dlspeed": 1000}, 10.0, False),               # qBittorrent's "unknown"
    ({"eta": None, "dlspeed": 1000}, 10.0, False),
    ({"eta": 5, "dlspeed": 1000}, 0.0, False),                      # 0 = never poll faster
    ({"progress": 1.0, "state": "checkingDL", "eta": 0}, 10.0, True),  # complete, being checked
    ({"progress": 1.0, "state": "stalledUP", "eta": 0}, 10.0, False),  # complete already: no wait
    ({"state": "error", "eta": 5, "dlspeed": 1000}, 10.0, False),
    ({"state": "metaDL", "size": 0, "total_size": 0, "progress": 0.0, "eta": 5}, 10.0, False),
])
def test_near_completion(changes: dict, limit: float, near: bool) -> None:
    assert near_completion(replace(BASE, **changes), limit) is near


def test_the_index_matches_real_hashes_first_then_the_oldest_tagged_torrent() -> None:
    hybrid = replace(BASE, hash="c" * 40, infohash_v1="b" * 40, infohash_v2="c" * 64, tags=("t",), added_on=5)
    newer = replace(BASE, hash="d" * 40, infohash_v1="d" * 40, tags=("t",), added_on=9)
    index = TorrentIndex([newer, hybrid])
    assert index.find({"b" * 40}) is hybrid
    assert index.find({"c" * 64}) is hybrid
    assert index.find({"c" * 40}) is None               # the truncated v2 `hash` is not an infohash
    assert index.find(set(), "t") is hybrid             # of two torrents with one tag, the oldest
    assert index.find({"d" * 40}, "t") is newer         # a hash beats the tag
    assert index.find(set(), "other") is None


_TAGS = ("jellybit-a", "jellybit-b", "Сериал", "")
_HEXES = tuple(c * 40 for c in "abcdef")


@st.composite
def _torrent(draw: st.DrawFn) -> TorrentInfo:
    """A torrent whose id, hash and tags come from small pools, so keys collide often."""
    torrent_id = draw(st.sampled_from(_HEXES))
    v1 = draw(st.sampled_from((torrent_id, "", *_HEXES)))
    tags = tuple(t for t in draw(st.lists(st.sampled_from(_TAGS), max_size=2, unique=True)) if t)
    return replace(BASE, hash=torrent_id, infohash_v1=v1, tags=tags,
                   added_on=draw(st.one_of(st.none(), st.integers(1, 5))))


@given(st.lists(st.tuples(st.lists(_torrent(), max_size=4), st.lists(st.sampled_from(_HEXES), max_size=2)),
                max_size=6))
def test_an_index_kept_up_to_date_finds_what_a_fresh_one_finds(
        polls: list[tuple[list[TorrentInfo], list[str]]]) -> None:
    """Changes and removals poll after poll leave the index as if built from qBittorrent's list now."""
    kept = TorrentIndex([])
    current: dict[str, TorrentInfo] = {}
    for changed, removed in polls:
        for torrent_id in removed:
            current.pop(torrent_id, None)
        for torrent in changed:
            current[torrent.hash] = torrent
        kept.update(changed, removed)
    fresh = TorrentIndex(current)
    assert kept.torrent_ids() == set(current)
    assert len(kept) == len(fresh)
    for key in (*_HEXES, ""):
        for tag in (*_TAGS, None):
            assert kept.find({key} - {""}, tag) == fresh.find({key} - {""}, tag)
            assert kept.get(key) == current.get(key)
