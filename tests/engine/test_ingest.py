"""Ingest: validate -> identity -> create or join (guarded) -> queued, with history and earlier runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jellybit.adapters.store import Store
from jellybit.core.identity import parse_torrent
from jellybit.core.models import Infohash
from jellybit.core.states import Actor, State
from jellybit.engine.ingest import MAX_CONTEXT_CHARS, adopt, ingest
from jellybit.errors import InvalidArgument, InvalidSource, JellybitError
from tests.support.torrents import make_content, make_torrent

LIMIT = 10 * 1024 * 1024
V1 = "0123456789abcdef0123456789abcdef01234567"
V2 = "fedcba9876543210" * 4


async def rows(store: Store) -> dict[str, int]:
    """Row count of every table."""
    names = await store.fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")
    result = {}
    for row in names:
        found = await store.fetchone(f"SELECT COUNT(*) AS n FROM {row['name']}")
        result[row["name"]] = found["n"]
    return result


async def test_magnet_creates_a_queued_download(store: Store) -> None:
    """A magnet becomes a queued download with its hash, name, cleaned context and history row."""
    result = await ingest(
        store, source=f"magnet:?xt=urn:btih:{V1.upper()}&dn=%D0%94%D1%8E%D0%BD%D0%B0+2021",
        context="  второй сезон,\r\nрусский дубляж\x07\x1b[31m  ", max_torrent_bytes=LIMIT, tag_prefix="jb-",
    )
    assert result.created
    assert result.added_hashes == ()
    assert result.settled_before == ()
    download = result.download
    assert result.id == download.id
    assert (download.source_type, download.display_name) == ("magnet", "Дюна 2021")
    assert download.state is State.QUEUED
    assert download.source_ref.startswith("magnet:?xt=urn:btih:")
    assert download.context == "второй сезон,\nрусский дубляж[31m"
    assert download.qbt_tag == f"jb-{download.id}"
    assert download.infohashes == (Infohash(V1, "v1"),)
    [row] = await store.transitions(download.id)
    assert (row.from_state, row.to_state, row.actor) == (None, State.QUEUED, Actor.HUMAN)
    assert await store.torrent_bytes(download.id) is None


async def test_torrent_file_is_stored_with_its_hashes(store: Store, tmp_path: Path) -> None:
    """A .torrent keeps its bytes (the worker adds it by file) and its name; actor is recorded."""
    content = make_content(tmp_path, "Сериал S01", {"e01.mkv": 30_000, "e02.mkv": 20_000})
    data = make_torrent(content, "hybrid")
    meta = parse_torrent(data, LIMIT)
    result = await ingest(store, torrent=data, max_torrent_bytes=LIMIT, actor=Actor.WORKER)
    download = result.download
    assert result.created
    assert (download.source_type, download.source_ref, download.display_name) == (
        "torrent", "Сериал S01", "Сериал S01")
    assert download.hashes() == {meta.v1, meta.v2}
    assert await store.torrent_bytes(download.id) == data
    assert (await store.transitions(download.id))[0].actor is Actor.WORKER


async def test_hybrid_by_v1_magnet_torrent_and_v2_magnet_is_one_download(
    store: Store, tmp_path: Path
) -> None:
    """The v1 magnet creates; the hybrid .torrent joins adding v2; the v2 magnet joins as well."""
    data = make_torrent(make_content(tmp_path, "hyb", {"a.mkv": 40_000}), "hybrid")
    meta = parse_torrent(data, LIMIT)
    assert meta.v1 is not None
    assert meta.v2 is not None
    first = await ingest(store, source=f"magnet:?xt=urn:btih:{meta.v1}", max_torrent_bytes=LIMIT)
    second = await ingest(store, torrent=data, max_torrent_bytes=LIMIT)
    third = await ingest(store, source=f"magnet:?xt=urn:btmh:1220{meta.v2}", max_torrent_bytes=LIMIT)
    fourth = await ingest(store, source=meta.v2, max_torrent_bytes=LIMIT)
    assert first.created
    assert not any(r.created for r in (second, third, fourth))
    assert {r.id for r in (first, second, third, fourth)} == {first.id}
    assert second.added_hashes == (meta.v2,)
    assert third.added_hashes == fourth.added_hashes == ()
    assert (await store.get_download(first.id)).hashes() == {meta.v1, meta.v2}
    assert (await rows(store))["download"] == 1


async def test_settled_earlier_download_is_reported_not_blocking(store: Store) -> None:
    """A hash processed before creates a new download and names the earlier one."""
    old = await ingest(store, source=V1, max_torrent_bytes=LIMIT)
    assert old.download.source_type == "infohash"
    await store.transition(old.id, State.FAILED, reason="stalled", actor=Actor.WORKER)
    hybrid = f"magnet:?xt=urn:btih:{V1}&xt=urn:btmh:1220{V2}"
    again = await ingest(store, source=hybrid, max_torrent_bytes=LIMIT)
    assert again.created
    assert again.id != old.id
    assert again.settled_before == (old.id,)
    joined = await ingest(store, source=V2, max_torrent_bytes=LIMIT)
    assert (joined.created, joined.id, joined.settled_before) == (False, again.id, (old.id,))


async def test_url_source_has_no_hash_yet(store: Store) -> None:
    """An http(s) URL is stored as is; qBittorrent fetches it and the hash comes later."""
    result = await ingest(store, source="https://tracker.example/dl/1.torrent", max_torrent_bytes=LIMIT)
    assert result.created
    assert (result.download.source_type, result.download.source_ref) == (
        "url", "https://tracker.example/dl/1.torrent")
    assert result.download.infohashes == ()


async def test_same_url_twice_joins_while_active(store: Store) -> None:
    """The same URL again joins its active download (no hash to match yet); a settled one does not."""
    url = "https://tracker.example/dl/42.torrent?passkey=Ключ"
    first = await ingest(store, source=url, max_torrent_bytes=LIMIT)
    before = await rows(store)
    again = await ingest(store, source=url, context="second try", max_torrent_bytes=LIMIT)
    assert (again.created, again.id) == (False, first.id)
    assert await rows(store) == before
    other = await ingest(store, source=url.replace("42", "43"), max_torrent_bytes=LIMIT)
    assert other.created
    await store.transition(first.id, State.FAILED, reason="metadata_timeout", actor=Actor.WORKER)
    fresh = await ingest(store, source=url, max_torrent_bytes=LIMIT)
    assert fresh.created
    assert fresh.id not in (first.id, other.id)


async def test_concurrent_ingests_over_two_connections(tmp_path: Path) -> None:
    """Two connections ingesting the same hash at once: exactly one download is created."""
    stores = [Store(tmp_path / "shared.db") for _ in range(2)]
    for store in stores:
        await store.open()
    try:
        results = await asyncio.gather(
            ingest(stores[0], source=V1, max_torrent_bytes=LIMIT),
            ingest(stores[1], source=f"magnet:?xt=urn:btih:{V1}&xt=urn:btmh:1220{V2}",
                   max_torrent_bytes=LIMIT),
        )
        assert sorted(r.created for r in results) == [False, True]
        assert results[0].id == results[1].id
        assert (await rows(stores[0]))["download"] == 1
        assert (await stores[0].get_download(results[0].id)).hashes() == {V1, V2}
    finally:
        for store in stores:
            await store.close()


BAD_INPUTS = [
    ({}, InvalidArgument, "exactly one"),
    ({"source": V1, "torrent": b"d4:infodee"}, InvalidArgument, "exactly one"),
    ({"source": "magnet:?dn=nothing"}, InvalidSource, "no BitTorrent infohash"),
    ({"source": "magnet:?xt=urn:btih:123"}, InvalidSource, "malformed v1 infohash"),
    ({"source": "ftp://example.org/a.torrent"}, InvalidSource, "unsupported URL scheme 'ftp'"),
    ({"source": ""}, InvalidSource, "empty"),
    ({"source": 42}, InvalidSource, "must be text"),
    ({"torrent": b"<html>404</html>"}, InvalidSource, "not a torrent file"),
    ({"torrent": b""}, InvalidSource, "not a torrent file"),
    ({"torrent": "ZDQ6aW5mb2Rl"}, InvalidSource, "expected bytes"),
    ({"torrent": b"d4:info" + b"x" * 2048 + b"e", "max_torrent_bytes": 1024}, InvalidSource,
     "larger than the 1 KiB limit"),
    ({"source": V1, "context": "я" * (MAX_CONTEXT_CHARS + 1)}, InvalidArgument, "context is longer"),
    ({"source": V1, "context": None}, InvalidArgument, "context must be text"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD_INPUTS)
async def test_bad_input_changes_nothing(store: Store, kwargs: dict, error: type[JellybitError],
                                         message: str) -> None:
    """Every bad input gets a clear domain error and leaves the database exactly as it was."""
    await ingest(store, source=V2, max_torrent_bytes=LIMIT)
    before = await rows(store)
    with pytest.raises(error, match=message):
        await ingest(store, **{"max_torrent_bytes": LIMIT, **kwargs})
    assert await rows(store) == before


async def test_context_at_the_limit_is_kept_whole(store: Store) -> None:
    """A context exactly at the bound is accepted unchanged (Cyrillic counts as characters)."""
    context = "д" * MAX_CONTEXT_CHARS
    result = await ingest(store, source=V1, context=context, max_torrent_bytes=LIMIT)
    assert result.download.context == context


async def test_adopt_creates_or_joins(store: Store) -> None:
    """A torrent added by hand becomes an adopted download (worker, empty context) or joins one."""
    result = await adopt(store, name="Фильм\u202e.2020\n", infohashes=[V1.upper(), Infohash(V1, "v1")],
                         tag_prefix="jb-")
    download = result.download
    assert result.created
    assert (download.source_type, download.display_name, download.context) == ("adopted", "Фильм.2020", "")
    assert download.infohashes == (Infohash(V1, "v1"),)
    assert download.qbt_tag == f"jb-{download.id}"
    [row] = await store.transitions(download.id)
    assert (row.actor, row.to_state) == (Actor.WORKER, State.QUEUED)
    ours = await ingest(store, source=V2, max_torrent_bytes=LIMIT)
    joined = await adopt(store, name="x", infohashes=[V2])
    assert (joined.created, joined.id) == (False, ours.id)


async def test_adopt_refuses_bad_hashes(store: Store) -> None:
    """Adoption needs real infohashes; nothing is written otherwise."""
    before = await rows(store)
    with pytest.raises(InvalidSource, match="at least one infohash"):
        await adopt(store, name="x", infohashes=[])
    with pytest.raises(InvalidSource, match="not an infohash"):
        await adopt(store, name="x", infohashes=[V1[:39]])
    assert await rows(store) == before
