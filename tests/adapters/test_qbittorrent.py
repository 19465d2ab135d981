"""QbittorrentClient against a real qbittorrent-nox (one per session, confined to loopback)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import httpx
import pytest

from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.core.ports import AddTorrent, TorrentInfo
from jellybit.core.torrent_state import TorrentIndex
from jellybit.errors import AdapterError, TorrentRejected
from tests.support.qbittorrent import (
    QbittorrentInstance,
    SeededTorrent,
    TorrentFileServer,
    eventually,
    magnet,
    seeded_torrent,
)

CATEGORY = "jellybit-test"
DONE_STATES = {"stalledUP", "uploading", "queuedUP", "forcedUP"}
PAUSED_STATES = {"pausedUP", "pausedDL", "stoppedUP", "stoppedDL"}


class RecordingTransport(httpx.AsyncHTTPTransport):
    """A real transport that remembers the requests (to read the session cookie, count logins)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return await super().handle_async_request(request)

    def logins(self) -> int:
        return sum(r.url.path.endswith("/auth/login") for r in self.requests)


@pytest.fixture
async def client(qbittorrent: QbittorrentInstance) -> AsyncIterator[QbittorrentClient]:
    """A client logged in to the session's qBittorrent."""
    async with QbittorrentClient(qbittorrent.config()) as c:
        yield c


async def add_seeded(client: QbittorrentClient, seeded: SeededTorrent, tag: str) -> None:
    await client.add(AddTorrent(tag=tag, category=CATEGORY, torrent_bytes=seeded.torrent))


async def wait_complete(client: QbittorrentClient, hashes: set[str]) -> TorrentInfo:
    async def probe() -> TorrentInfo | None:
        found = TorrentIndex(await client.torrents(hashes=sorted(hashes))).find(hashes, None)
        return found if found and found.progress == 1.0 and found.state in DONE_STATES else None

    return await eventually(probe)


# ---------------------------------------------------------------- session


async def test_login_and_version_detection(client: QbittorrentClient) -> None:
    await client.login()
    version = await client.app_version()
    api = await client.api_version()
    assert version.startswith("v")
    assert api >= (2, 0)
    # The Debian package under test is 4.x, which still uses pause/resume.
    assert (api >= (2, 11)) == version.startswith(("v5", "v6"))


async def test_wrong_password_is_a_clear_error_without_the_password(
    qbittorrent: QbittorrentInstance, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "Not-The-Password-93k1"
    async with QbittorrentClient(qbittorrent.config(password=secret)) as bad:
        with pytest.raises(AdapterError, match="wrong user name or password") as caught:
            await bad.torrents()
        with pytest.raises(AdapterError, match="wrong user name or password"):
            await bad.login()
    assert caught.value.system == "qbittorrent"
    assert secret not in str(caught.value)
    assert secret not in repr(caught.value)
    assert secret not in caplog.text
    assert all(secret not in str(r.args) for r in caplog.records)


async def test_the_password_never_reaches_the_logs(
    qbittorrent: QbittorrentInstance, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    transport = RecordingTransport()
    async with QbittorrentClient(qbittorrent.config(), transport=transport) as c:
        await c.add(AddTorrent(tag="jellybit-log", category=CATEGORY, magnet=magnet(name="log")))
        await c.sync()
        await logout_behind_the_back(qbittorrent, transport)
        await c.torrents(tag="jellybit-log")
    assert transport.logins() == 2
    assert caplog.records, "expected the client and httpx to log something at DEBUG"
    assert qbittorrent.password not in caplog.text
    assert all(qbittorrent.password not in str(r.args) for r in caplog.records)


async def logout_behind_the_back(qbittorrent: QbittorrentInstance, transport: RecordingTransport) -> None:
    """End the client's WebUI session with its own cookie, as a session timeout would."""
    cookie = transport.requests[-1].headers["cookie"]
    async with httpx.AsyncClient(base_url=f"{qbittorrent.url}/api/v2/", headers={"cookie": cookie}) as other:
        assert (await other.post("auth/logout")).status_code == 200
        assert (await other.get("app/version")).status_code == 403


async def test_an_expired_session_is_renewed_transparently(qbittorrent: QbittorrentInstance) -> None:
    transport = RecordingTransport()
    async with QbittorrentClient(qbittorrent.config(), transport=transport) as c:
        assert await c.torrents() == []
        assert transport.logins() == 1
        await logout_behind_the_back(qbittorrent, transport)
        assert await c.torrents() == []
        assert transport.logins() == 2
        statuses = [r.url.path.rsplit("/", 1)[-1] for r in transport.requests]
        assert statuses.count("info") == 3  # first call, the refused one, the retry


# ---------------------------------------------------------------- adding and completing


async def test_v1_v2_and_hybrid_torrents_complete_and_match_by_real_hashes(
    client: QbittorrentClient, qbittorrent: QbittorrentInstance
) -> None:
    seeded = {kind: seeded_torrent(qbittorrent.data_dir, f"album-{kind}", kind=kind, seed=i)
              for i, kind in enumerate(("v1", "v2", "hybrid"))}
    for kind, s in seeded.items():
        await add_seeded(client, s, f"jellybit-{kind}")
    done = {kind: await wait_complete(client, s.hashes()) for kind, s in seeded.items()}

    for kind, info in done.items():
        assert info.name == f"album-{kind}"
        assert info.category == CATEGORY
        assert info.tags == (f"jellybit-{kind}",)
        assert info.save_path.rstrip("/") == str(qbittorrent.data_dir)
        assert info.content_path == str(seeded[kind].content)
        assert info.amount_left == 0
        assert info.eta is None
        # v2 and hybrid torrents align files to pieces (BEP 52), so their total may include padding.
        assert info.total_size == 160_000 if kind == "v1" else info.total_size >= 160_000

    v1, v2, hybrid = seeded["v1"], seeded["v2"], seeded["hybrid"]
    assert done["v1"].hash == v1.infohash_v1
    assert done["v1"].hashes() == {v1.infohash_v1}
    assert done["v2"].hashes() == {v2.infohash_v2}
    assert done["v2"].hash == v2.infohash_v2[:40]
    info = done["hybrid"]
    assert info.hashes() == {hybrid.infohash_v1, hybrid.infohash_v2}
    assert info.hash == hybrid.infohash_v2[:40] != hybrid.infohash_v1

    everything = await client.torrents()
    assert TorrentIndex(everything).find({hybrid.infohash_v1}, None).hash == info.hash
    assert TorrentIndex(everything).find({hybrid.infohash_v2}, None).hash == info.hash
    assert TorrentIndex(everything).find({info.hash}, None) is None
    # The server filter only knows ids; the client still finds a hybrid by its v1 hash.
    assert [t.hash for t in await client.torrents(hashes=[hybrid.infohash_v1])] == [info.hash]
    assert [t.hash for t in await client.torrents(hashes=[hybrid.infohash_v2])] == [info.hash]

    files = await client.files(info.hash)
    assert sorted((f.name, f.size, f.progress) for f in files) == [
        ("album-hybrid/sub/track1.bin", 64_000, 1.0), ("album-hybrid/track0.bin", 96_000, 1.0)]
    assert sorted(f.index for f in files) == [0, 1]


async def test_adding_twice_or_garbage_is_rejected(
    client: QbittorrentClient, qbittorrent: QbittorrentInstance
) -> None:
    seeded = seeded_torrent(qbittorrent.data_dir, "twice")
    await add_seeded(client, seeded, "jellybit-a")

    async def listed() -> list[tuple[str, ...]] | None:
        tags = [t.tags for t in await client.torrents()]
        return tags or None

    # qBittorrent lists an accepted torrent a moment later (later still on a busy machine): wait for
    # it rather than race it.
    assert await eventually(listed) == [("jellybit-a",)]
    with pytest.raises(TorrentRejected) as duplicate:
        await add_seeded(client, seeded, "jellybit-b")
    assert duplicate.value.reason == "duplicate"
    with pytest.raises(TorrentRejected) as invalid:
        await client.add(AddTorrent(tag="jellybit-c", category=CATEGORY, torrent_bytes=b"d4:spam"))
    assert invalid.value.reason == "invalid"
    assert "not a valid torrent" in str(invalid.value)
    assert await listed() == [("jellybit-a",)]


async def test_a_trackerless_magnet_waits_for_metadata_named_by_dn(client: QbittorrentClient) -> None:
    link = magnet("ab" * 20, "Сериал — 1 сезон")
    await client.add(AddTorrent(tag="jellybit-m", category=CATEGORY, magnet=link))

    async def probe() -> TorrentInfo | None:
        found = TorrentIndex(await client.torrents(category=CATEGORY)).find(set(), "jellybit-m")
        return found if found and found.state == "metaDL" else None

    info = await eventually(probe)
    assert info.name == "Сериал — 1 сезон"
    assert info.hashes() == {"ab" * 20}
    assert info.progress == 0.0
    assert info.size == 0
    assert info.content_path == ""
    with pytest.raises(TorrentRejected):
        await client.add(AddTorrent(tag="jellybit-m2", category=CATEGORY, magnet=link))


async def test_a_url_source_is_fetched_by_qbittorrent_and_found_by_tag(
    client: QbittorrentClient, qbittorrent: QbittorrentInstance
) -> None:
    seeded = seeded_torrent(qbittorrent.data_dir, "from-url", kind="hybrid")
    with TorrentFileServer({"/x.torrent": seeded.torrent}) as server:
        url = f"{server.base_url}/x.torrent"
        await client.add(AddTorrent(tag="jellybit-url", category=CATEGORY, url=url))

        async def probe() -> TorrentInfo | None:
            return TorrentIndex(await client.torrents(tag="jellybit-url")).find(set(), "jellybit-url")

        info = await eventually(probe)
        assert server.fetched == ["/x.torrent"]
    assert info.hashes() == seeded.hashes()
    assert info.category == CATEGORY
    assert (await wait_complete(client, seeded.hashes())).hash == info.hash


async def test_filters_by_category_and_tag(client: QbittorrentClient) -> None:
    await client.add(AddTorrent(tag="jellybit-1", category=CATEGORY, magnet=magnet("11" * 20)))
    await client.add(AddTorrent(tag="jellybit-2", category="by-hand", magnet=magnet("22" * 20)))
    await eventually(lambda: _count(client, 2))
    assert [t.hash for t in await client.torrents(category=CATEGORY)] == ["11" * 20]
    assert [t.hash for t in await client.torrents(tag="jellybit-2")] == ["22" * 20]
    assert await client.torrents(hashes=[]) == []
    assert await client.torrents(hashes=["33" * 20]) == []


async def _count(client: QbittorrentClient, n: int) -> bool:
    return len(await client.torrents()) == n


async def test_ensure_category_creates_and_updates_the_save_path(
    client: QbittorrentClient, qbittorrent: QbittorrentInstance
) -> None:
    first, second = str(qbittorrent.data_dir / "a"), str(qbittorrent.data_dir / "b")
    await client.ensure_category(CATEGORY, first)
    await client.ensure_category(CATEGORY, first)
    with qbittorrent.process.admin() as admin:
        assert admin.get("torrents/categories").json()[CATEGORY]["savePath"].rstrip("/") == first
    await client.ensure_category(CATEGORY, second)
    await client.ensure_category(CATEGORY)
    with qbittorrent.process.admin() as admin:
        assert admin.get("torrents/categories").json()[CATEGORY]["savePath"].rstrip("/") == second


# ---------------------------------------------------------------- polling, control, removal


async def test_sync_reports_new_torrents_progress_and_removals(
    client: QbittorrentClient, qbittorrent: QbittorrentInstance
) -> None:
    first = await client.sync()
    assert first.full_update
    assert dict(first.torrents) == {}
    assert first.removed == ()

    link = magnet("cd" * 20, "waiting")
    await client.add(AddTorrent(tag="jellybit-s1", category=CATEGORY, magnet=link))
    seeded = seeded_torrent(qbittorrent.data_dir, "syncing", kind="hybrid")
    await add_seeded(client, seeded, "jellybit-s2")

    async def completed() -> TorrentInfo | None:
        snapshot = await client.sync()
        assert not snapshot.full_update
        found = TorrentIndex(snapshot.torrents.values()).find(seeded.hashes(), None)
        return found if found and found.progress == 1.0 else None

    done = await eventually(completed)
    snapshot = await client.sync()
    assert set(snapshot.torrents) == {"cd" * 20, done.hash}
    assert snapshot.torrents["cd" * 20].name == "waiting"
    assert snapshot.torrents[done.hash].tags == ("jellybit-s2",)
    assert snapshot.torrents[done.hash].hashes() == seeded.hashes()

    await client.delete(["cd" * 20], delete_files=False)

    async def removed() -> tuple[str, ...]:
        return (await client.sync()).removed

    assert await eventually(removed) == ("cd" * 20,)
    after = await client.sync()
    assert set(after.torrents) == {done.hash}
    assert after.removed == ()


async def test_sync_names_the_torrents_its_answer_changed_and_none_when_nothing_did(
    client: QbittorrentClient, qbittorrent: QbittorrentInstance
) -> None:
    first = await client.sync()
    assert first.changed == frozenset()
    await client.add(AddTorrent(tag="jellybit-c1", category=CATEGORY, magnet=magnet("ab" * 20, "Тихий")))
    await client.add(AddTorrent(tag="jellybit-c2", category=CATEGORY, magnet=magnet("ba" * 20, "quiet")))
    known: set[str] = set()

    async def quiet() -> bool:
        snapshot = await client.sync()
        # Every torrent that appears is named as changed; a torrent left alone stops being named.
        assert set(snapshot.torrents) - known <= snapshot.changed
        assert snapshot.changed <= set(snapshot.torrents)
        known.update(snapshot.torrents)
        return known == {"ab" * 20, "ba" * 20} and not snapshot.changed

    await eventually(quiet, within=30)
    await client.delete(["ab" * 20], delete_files=False)

    async def removed() -> tuple[str, ...]:
        return (await client.sync()).removed

    assert await eventually(removed) == ("ab" * 20,)
    async with QbittorrentClient(qbittorrent.config()) as fresh:  # a full answer names every torrent
        full = await fresh.sync()
    assert full.full_update
    assert full.changed == frozenset(full.torrents) == {"ba" * 20}


async def test_a_restart_gives_a_full_update_and_a_new_login(qbittorrent: QbittorrentInstance) -> None:
    transport = RecordingTransport()
    async with QbittorrentClient(qbittorrent.config(), transport=transport) as c:
        await c.add(AddTorrent(tag="jellybit-r", category=CATEGORY, magnet=magnet("ef" * 20, "kept")))
        await eventually(lambda: _count(c, 1))
        assert (await c.sync()).full_update
        qbittorrent.process.stop()
        with pytest.raises(AdapterError, match="cannot connect"):
            await c.sync()
        qbittorrent.process.start()
        snapshot = await c.sync()
        assert snapshot.full_update
        assert set(snapshot.torrents) == {"ef" * 20}
        assert snapshot.removed == ()
        assert transport.logins() == 2


async def test_pause_and_resume(client: QbittorrentClient, qbittorrent: QbittorrentInstance) -> None:
    seeded = seeded_torrent(qbittorrent.data_dir, "pausable")
    await add_seeded(client, seeded, "jellybit-p")
    info = await wait_complete(client, seeded.hashes())

    async def state_in(states: set[str]) -> bool:
        return (await client.torrents(hashes=[info.hash]))[0].state in states

    await client.pause([info.hash])
    await eventually(lambda: state_in(PAUSED_STATES))
    await client.resume([info.hash])
    await eventually(lambda: state_in(DONE_STATES))


async def test_add_paused_stays_paused(client: QbittorrentClient) -> None:
    await client.add(AddTorrent(tag="jellybit-ps", category=CATEGORY, magnet=magnet("fa" * 20), paused=True))
    info = await eventually(lambda: _first(client))
    assert info.state in PAUSED_STATES


async def _first(client: QbittorrentClient) -> TorrentInfo | None:
    listed = await client.torrents()
    return listed[0] if listed else None


async def test_delete_keeps_or_removes_the_data(
    client: QbittorrentClient, qbittorrent: QbittorrentInstance
) -> None:
    keep = seeded_torrent(qbittorrent.data_dir, "keep-me")
    drop = seeded_torrent(qbittorrent.data_dir, "drop-me", seed=7)
    for s in (keep, drop):
        await add_seeded(client, s, "jellybit-d")
    kept = await wait_complete(client, keep.hashes())
    dropped = await wait_complete(client, drop.hashes())

    await client.delete([kept.hash], delete_files=False)
    await client.delete([dropped.hash], delete_files=True)
    await eventually(lambda: _count(client, 0))

    async def data_gone() -> bool:
        return not drop.content.exists()

    await eventually(data_gone)
    assert (keep.content / "track0.bin").stat().st_size == 96_000
    assert (keep.content / "sub" / "track1.bin").exists()
    assert qbittorrent.data_dir.exists()
