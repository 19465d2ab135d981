"""Matching a download to qBittorrent's torrents, and qBittorrent → local path translation."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from jellybit.config import PathMapping
from jellybit.core.path_map import translate_path
from jellybit.core.ports import TorrentInfo
from jellybit.core.torrent_state import TorrentIndex

V1 = "5662" + "a" * 32 + "9358"
V2 = "c3ff84a2" + "b" * 48 + "c9370000"


def torrent(hash: str, *, v1: str = "", v2: str = "", tags: tuple[str, ...] = (),
            added_on: int | None = 100) -> TorrentInfo:
    return TorrentInfo(
        hash=hash, infohash_v1=v1, infohash_v2=v2, name="n", state="stalledUP", progress=1.0,
        dlspeed=0, eta=None, size=1, total_size=1, amount_left=0, content_path="/d/n",
        save_path="/d", category="jellybit", tags=tags, added_on=added_on, completion_on=None,
    )


def match_torrent(hashes: set[str], tag: str | None, torrents: list[TorrentInfo]) -> TorrentInfo | None:
    """The worker's lookup: a real infohash first, then the per-download tag."""
    return TorrentIndex(torrents).find(hashes, tag)


HYBRID = torrent(V2[:40], v1=V1, v2=V2)
V2_ONLY = torrent("d" * 40, v2="d" * 64)


def test_hybrid_is_found_by_either_real_hash() -> None:
    others = [torrent("1" * 40, v1="1" * 40), V2_ONLY]
    assert match_torrent({V1}, None, [*others, HYBRID]) is HYBRID
    assert match_torrent({V2}, None, [*others, HYBRID]) is HYBRID


def test_the_truncated_hash_alone_never_matches() -> None:
    assert match_torrent({V2[:40]}, None, [HYBRID]) is None
    assert match_torrent({"d" * 40}, None, [V2_ONLY]) is None


def test_hash_wins_over_tag() -> None:
    by_tag = torrent("2" * 40, v1="2" * 40, tags=("jellybit-x",), added_on=1)
    assert match_torrent({V1}, "jellybit-x", [by_tag, HYBRID]) is HYBRID


def test_tag_finds_a_url_source_before_its_hash_is_known() -> None:
    mine = torrent("3" * 40, v1="3" * 40, tags=("other", "jellybit-abc"), added_on=50)
    assert match_torrent(set(), "jellybit-abc", [HYBRID, mine]) is mine
    assert match_torrent(set(), "jellybit-ab", [HYBRID, mine]) is None  # whole tags only
    assert match_torrent(set(), None, [HYBRID, mine]) is None


def test_several_tagged_torrents_give_the_oldest() -> None:
    newer = torrent("4" * 40, v1="4" * 40, tags=("t",), added_on=200)
    older = torrent("5" * 40, v1="5" * 40, tags=("t",), added_on=100)
    assert match_torrent(set(), "t", [newer, older]) is older
    assert match_torrent(set(), "t", [replace(older, added_on=None), newer]) is newer


def test_legacy_server_without_infohash_fields_matches_a_v1_hash() -> None:
    legacy = torrent("6" * 40)
    assert match_torrent({"6" * 40}, None, [legacy]) is legacy


# ---------------------------------------------------------------- translate_path

MAP = [
    PathMapping(qbittorrent="/downloads", local="/srv/media/downloads"),
    PathMapping(qbittorrent="/downloads/tv/", local="/mnt/tv"),
]


def test_longest_prefix_on_component_boundaries() -> None:
    assert translate_path("/downloads/a/b.mkv", MAP) == "/srv/media/downloads/a/b.mkv"
    assert translate_path("/downloads", MAP) == "/srv/media/downloads"
    assert translate_path("/downloads/tv/S01/e.mkv", MAP) == "/mnt/tv/S01/e.mkv"
    assert translate_path("/downloads/tv", MAP) == "/mnt/tv"
    assert translate_path("/downloads/tvx/e.mkv", MAP) == "/srv/media/downloads/tvx/e.mkv"
    assert translate_path("/downloadsX/a", MAP) == "/downloadsX/a"
    assert translate_path("/other/a", MAP) == "/other/a"
    assert translate_path("/other/a", []) == "/other/a"


def test_root_mappings() -> None:
    assert translate_path("/data/x", [PathMapping(qbittorrent="/", local="/mnt/q")]) == "/mnt/q/data/x"
    assert translate_path("/data/x", [PathMapping(qbittorrent="/data", local="/")]) == "/x"


def test_cyrillic_components() -> None:
    mapping = [PathMapping(qbittorrent="/загрузки", local="/srv/загрузки")]
    assert translate_path("/загрузки/Сериал/серия 1.mkv", mapping) == "/srv/загрузки/Сериал/серия 1.mkv"
    assert translate_path("/загрузкиX/a", mapping) == "/загрузкиX/a"


component = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)),
                    min_size=1, max_size=8)
components = st.lists(component, min_size=1, max_size=4)


@given(prefix=components, rest=st.lists(component, max_size=4), local=components)
def test_inside_the_prefix_keeps_the_rest(prefix: list[str], rest: list[str], local: list[str]) -> None:
    qbt, here = "/" + "/".join(prefix), "/" + "/".join(local)
    path = "/".join([qbt, *rest])
    expected = "/".join([here, *rest])
    assert translate_path(path, [PathMapping(qbittorrent=qbt, local=here)]) == expected
    assert translate_path(path, [PathMapping(qbittorrent=qbt + "/", local=here + "/")]) == expected


@given(prefix=components, suffix=component, rest=st.lists(component, max_size=3))
def test_a_longer_component_is_not_inside(prefix: list[str], suffix: str, rest: list[str]) -> None:
    qbt = "/" + "/".join(prefix)
    path = "/".join([qbt + suffix, *rest])   # e.g. /downloads -> /downloadsX/...
    assert translate_path(path, [PathMapping(qbittorrent=qbt, local="/elsewhere")]) == path


@given(prefix=components, extra=components, rest=st.lists(component, max_size=3))
def test_the_longest_prefix_wins_in_any_order(prefix: list[str], extra: list[str], rest: list[str]) -> None:
    short = "/" + "/".join(prefix)
    long = "/".join([short, *extra])
    path = "/".join([long, *rest])
    mappings = [PathMapping(qbittorrent=short, local="/short"), PathMapping(qbittorrent=long, local="/long")]
    expected = "/".join(["/long", *rest])
    assert translate_path(path, mappings) == expected
    assert translate_path(path, mappings[::-1]) == expected
