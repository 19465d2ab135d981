"""QbittorrentClient paths a real 4.5 server will not produce on demand: outages, bad answers, 5.x.

httpx.MockTransport stands in for the server here; the happy paths run against the real
qbittorrent-nox in test_qbittorrent.py.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.config import QbittorrentConfig
from jellybit.core.ports import AddTorrent
from jellybit.errors import AdapterError, InvalidArgument, TorrentRejected
from tests.support.services import free_port

SECRET = "Sup3r-Secret-Pw"
H1, H2, H3 = "a" * 40, "b" * 40, "c" * 40
Reply = httpx.Response | Callable[[httpx.Request], httpx.Response]


class FakeQbt:
    """A scripted WebUI: login, version and per-path replies; records every request."""

    def __init__(self, api: str = "2.8.19", routes: dict[str, Any] | None = None,
                 login: Reply | None = None) -> None:
        self.api = api
        self.routes: dict[str, Any] = routes or {}
        self.login = login
        self.requests: list[httpx.Request] = []
        self.session = "sid-1"

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path.removeprefix("/api/v2/")
        if path == "auth/login":
            if self.login is not None:
                return self.login(request) if callable(self.login) else self.login
            return httpx.Response(200, text="Ok.", headers={"set-cookie": f"SID={self.session}; path=/"})
        if request.headers.get("cookie") != f"SID={self.session}":
            return httpx.Response(403, text="Forbidden")
        if path == "app/webapiVersion":
            return httpx.Response(200, text=self.api)
        reply = self.routes.get(path)
        if reply is None:
            return httpx.Response(404, text="Not Found")
        if isinstance(reply, list):
            reply = reply.pop(0)
        return reply(request) if callable(reply) else reply

    def client(self, **config: Any) -> QbittorrentClient:
        values = {"url": "http://qbt.test:8080", "password": SECRET, **config}
        return QbittorrentClient(QbittorrentConfig(**values), transport=httpx.MockTransport(self.handler))

    def paths(self) -> list[str]:
        return [r.url.path.removeprefix("/api/v2/") for r in self.requests]

    def form(self, index: int = -1) -> dict[str, str]:
        body = self.requests[index].content.decode()
        return {k: v[0] for k, v in parse_qs(body).items()}


def no_secret(exc: BaseException, caplog: pytest.LogCaptureFixture) -> None:
    assert SECRET not in str(exc)
    assert SECRET not in repr(exc)
    assert SECRET not in caplog.text


@pytest.fixture(autouse=True)
def _debug_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)


# ---------------------------------------------------------------- outages and bad answers


async def test_connection_refused_on_a_closed_port(caplog: pytest.LogCaptureFixture) -> None:
    config = QbittorrentConfig(url=f"http://127.0.0.1:{free_port()}", password=SECRET, timeout=2)
    async with QbittorrentClient(config) as client:
        with pytest.raises(AdapterError, match=r"cannot connect to http://127\.0\.0\.1") as caught:
            await client.sync()
    assert caught.value.system == "qbittorrent"
    no_secret(caught.value, caplog)


async def test_credentials_in_the_url_stay_out_of_messages(caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://admin:{SECRET}x@127.0.0.1:{free_port()}"
    config = QbittorrentConfig(url=url, password="other", timeout=2)
    async with QbittorrentClient(config) as client:
        with pytest.raises(AdapterError, match=r"cannot connect to http://127\.0\.0\.1:\d+:") as caught:
            await client.app_version()
    no_secret(caught.value, caplog)


async def test_a_timeout_is_one_adapter_error(caplog: pytest.LogCaptureFixture) -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    fake = FakeQbt(routes={"torrents/info": slow})
    async with fake.client(timeout=3) as client:
        with pytest.raises(AdapterError, match=r"no answer from http://qbt\.test:8080 within 3 s") as caught:
            await client.torrents()
    no_secret(caught.value, caplog)


async def test_a_login_timeout_does_not_leak_the_form(caplog: pytest.LogCaptureFixture) -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.WriteTimeout(f"timed out sending {request.content!r}", request=request)

    async with FakeQbt(login=slow).client() as client:
        with pytest.raises(AdapterError, match="auth/login: no answer") as caught:
            await client.login()
    no_secret(caught.value, caplog)


async def test_other_transport_errors_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    def broken(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError(f"peer closed; sent {SECRET}", request=request)

    async with FakeQbt(routes={"torrents/info": broken}).client() as client:
        with pytest.raises(AdapterError, match=r"RemoteProtocolError: peer closed; sent \*\*\*") as caught:
            await client.torrents()
    no_secret(caught.value, caplog)


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors(status: int, caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeQbt(routes={"sync/maindata": httpx.Response(status, text=f"oops {SECRET}")})
    async with fake.client() as client:
        with pytest.raises(AdapterError, match=f"sync/maindata: HTTP {status}") as caught:
            await client.sync()
    no_secret(caught.value, caplog)


@pytest.mark.parametrize(("body", "what"), [
    ("<html>login page</html>", "not JSON"),
    ('{"torrents": ', "not JSON"),
    ('{"hash": 1}', "of an unexpected shape"),
    ('[{"name": "no hash"}]', "of an unexpected shape"),
])
async def test_garbage_answers(body: str, what: str) -> None:
    async with FakeQbt(routes={"torrents/info": httpx.Response(200, text=body)}).client() as client:
        with pytest.raises(AdapterError, match=f"torrents/info: answer is {what}"):
            await client.torrents()


async def test_a_sync_without_rid_is_rejected_and_the_view_survives() -> None:
    full = {"rid": 1, "full_update": True, "torrents": {H1: {"name": "one", "progress": 0.5}}}
    fake = FakeQbt(routes={"sync/maindata": [httpx.Response(200, json=full),
                                             httpx.Response(200, json={"torrents": {}}),
                                             httpx.Response(200, json={"rid": 2})]})
    async with fake.client() as client:
        assert set((await client.sync()).torrents) == {H1}
        with pytest.raises(AdapterError, match="unexpected shape"):
            await client.sync()
        assert set((await client.sync()).torrents) == {H1}
    assert [parse_qs(r.url.query.decode()).get("rid") for r in fake.requests if "sync" in r.url.path] == [
        ["0"], ["1"], ["1"]]


# ---------------------------------------------------------------- authentication


@pytest.mark.parametrize("reply", [httpx.Response(200, text="Fails."), httpx.Response(401, text="")])
async def test_wrong_credentials_4x_and_52(reply: httpx.Response, caplog: pytest.LogCaptureFixture) -> None:
    async with FakeQbt(login=reply).client() as client:
        with pytest.raises(AdapterError, match="wrong user name or password") as caught:
            await client.torrents()
    no_secret(caught.value, caplog)


async def test_a_banned_address_is_reported() -> None:
    async with FakeQbt(login=httpx.Response(403, text="banned")).client() as client:
        with pytest.raises(AdapterError, match="banned after too many failed logins"):
            await client.login()


async def test_an_unexpected_login_answer_never_echoes_the_body(caplog: pytest.LogCaptureFixture) -> None:
    echo = httpx.Response(200, text=f"<html>username=admin&password={SECRET}</html>")
    async with FakeQbt(login=echo).client() as client:
        with pytest.raises(AdapterError, match="unexpected answer HTTP 200") as caught:
            await client.login()
    no_secret(caught.value, caplog)


async def test_login_204_of_qbittorrent_52_is_success() -> None:
    fake = FakeQbt()
    fake.login = lambda request: httpx.Response(204, headers={"set-cookie": "SID=sid-1; path=/"})
    fake.routes["torrents/info"] = httpx.Response(200, json=[])
    async with fake.client() as client:
        assert await client.torrents() == []


async def test_a_session_expiry_logs_in_once_and_retries() -> None:
    fake = FakeQbt(routes={"torrents/info": httpx.Response(200, json=[])})
    async with fake.client() as client:
        await client.torrents()
        fake.session = "sid-2"  # the server forgot our cookie (timeout, restart)
        assert await client.torrents() == []
    assert fake.paths() == ["auth/login", "torrents/info", "torrents/info", "auth/login", "torrents/info"]


async def test_still_forbidden_after_a_new_login() -> None:
    fake = FakeQbt(routes={"torrents/info": httpx.Response(403, text="Forbidden")})
    async with fake.client() as client:
        with pytest.raises(AdapterError, match="HTTP 403 even after logging in again"):
            await client.torrents()
    assert fake.paths().count("auth/login") == 2


async def test_no_password_configured_but_login_required() -> None:
    fake = FakeQbt(routes={"torrents/info": httpx.Response(200, json=[])})
    async with fake.client(password=None) as client:
        with pytest.raises(AdapterError, match="requires a login but no password is configured"):
            await client.torrents()
        with pytest.raises(AdapterError, match="requires a login but no password is configured"):
            await client.login()
    assert "auth/login" not in fake.paths()


async def test_localhost_auth_off_needs_no_login() -> None:
    fake = FakeQbt(routes={"torrents/info": httpx.Response(200, json=[])})
    original = fake.handler

    def open_server(request: httpx.Request) -> httpx.Response:
        request.headers["cookie"] = "SID=sid-1"  # the server accepts anyone
        return original(request)

    client = QbittorrentClient(QbittorrentConfig(url="http://qbt.test", password=None),
                               transport=httpx.MockTransport(open_server))
    fake.routes["app/version"] = httpx.Response(200, text="v4.5.2")
    async with client:
        await client.login()
        assert await client.torrents() == []
    assert fake.paths() == ["app/version", "torrents/info"]


# ---------------------------------------------------------------- 4.x and 5.x dialects


@pytest.mark.parametrize(("api", "stop", "start", "paused_key"), [
    ("2.8.19", "torrents/pause", "torrents/resume", "paused"),
    ("2.10.4", "torrents/pause", "torrents/resume", "paused"),
    ("2.11.0", "torrents/stop", "torrents/start", "stopped"),
    ("2.14.1", "torrents/stop", "torrents/start", "stopped"),
])
async def test_version_picks_the_dialect(api: str, stop: str, start: str, paused_key: str) -> None:
    ok = httpx.Response(200, text="Ok.")
    fake = FakeQbt(api=api, routes={p: ok for p in (stop, start, "torrents/add")})
    async with fake.client() as client:
        assert await client.api_version() == tuple(int(p) for p in api.split("."))
        await client.pause([H1, "D" * 64])
        assert fake.paths()[-1] == stop
        assert fake.form() == {"hashes": f"{H1}|{'d' * 40}"}
        await client.resume([H2])
        assert fake.paths()[-1] == start
        assert fake.form() == {"hashes": H2}
        await client.add(AddTorrent(tag="jellybit-x", category="jellybit", magnet=f"magnet:?xt=urn:btih:{H3}",
                                    save_path="/downloads", paused=True))
    assert fake.form() == {"urls": f"magnet:?xt=urn:btih:{H3}", "category": "jellybit",
                           "tags": "jellybit-x", "autoTMM": "false", paused_key: "true",
                           "savepath": "/downloads"}
    assert fake.paths().count("app/webapiVersion") == 1


async def test_an_unparseable_api_version() -> None:
    async with FakeQbt(api="<html>").client() as client:
        with pytest.raises(AdapterError, match="unexpected WebUI API version"):
            await client.api_version()


@pytest.mark.parametrize(("status", "body"), [
    (200, "Ok."), (200, ""), (204, ""), (202, '{"pending_count": 1}'),
    (200, '{"added_torrent_ids": ["x"], "success_count": 1, "pending_count": 0, "failure_count": 0}'),
])
async def test_add_accepted(status: int, body: str) -> None:
    fake = FakeQbt(routes={"torrents/add": httpx.Response(status, text=body)})
    async with fake.client(save_path="/config/default") as client:
        await client.add(AddTorrent(tag="t", category="c", torrent_bytes=b"d4:infod4:name1:xee"))
    request = fake.requests[-1]
    assert request.headers["content-type"].startswith("multipart/form-data")
    assert b'name="savepath"\r\n\r\n/config/default' in request.content
    assert b'filename="jellybit.torrent"' in request.content


@pytest.mark.parametrize(("status", "body", "reason"), [
    (200, "Fails.", "duplicate"),
    (409, "Conflict", "duplicate"),
    (200, '{"success_count": 0, "pending_count": 0, "failure_count": 1}', "duplicate"),
    (415, "Error: 'jellybit.torrent' is not a valid torrent file.", "invalid"),
])
async def test_add_rejected(status: int, body: str, reason: str) -> None:
    fake = FakeQbt(routes={"torrents/add": httpx.Response(status, text=body)})
    async with fake.client() as client:
        with pytest.raises(TorrentRejected) as caught:
            await client.add(AddTorrent(tag="t", category="c", url="http://tracker.test/x.torrent"))
    assert caught.value.reason == reason
    assert isinstance(caught.value, AdapterError)
    assert caught.value.system == "qbittorrent"


async def test_add_with_an_odd_answer() -> None:
    fake = FakeQbt(routes={"torrents/add": httpx.Response(200, text="Maybe.")})
    async with fake.client() as client:
        with pytest.raises(AdapterError, match=r"torrents/add: unexpected answer 'Maybe\.'"):
            await client.add(AddTorrent(tag="t", category="c", magnet="magnet:?xt=urn:btih:" + H1))


# ---------------------------------------------------------------- bad arguments change nothing


@pytest.mark.parametrize("request_", [
    AddTorrent(tag="t", category="c"),
    AddTorrent(tag="t", category="c", magnet="magnet:?xt=urn:btih:" + H1, url="http://x.test/a"),
])
async def test_add_needs_exactly_one_source(request_: AddTorrent) -> None:
    fake = FakeQbt()
    async with fake.client() as client:
        with pytest.raises(InvalidArgument, match="exactly one of"):
            await client.add(request_)
    assert fake.requests == []


@pytest.mark.parametrize("bad", ["all", f"{H1}|{H2}", "xyz", "a" * 39, ""])
async def test_delete_refuses_anything_but_hashes(bad: str) -> None:
    fake = FakeQbt(routes={"torrents/delete": httpx.Response(200)})
    async with fake.client() as client:
        with pytest.raises(InvalidArgument, match="not an infohash"):
            await client.delete([H1, bad], delete_files=True)
        await client.delete([], delete_files=True)
    assert "torrents/delete" not in fake.paths()


async def test_delete_sends_ids_and_the_flag() -> None:
    fake = FakeQbt(routes={"torrents/delete": httpx.Response(200)})
    async with fake.client() as client:
        await client.delete([H1.upper()], delete_files=False)
        assert fake.form() == {"hashes": H1, "deleteFiles": "false"}
        await client.delete([H1, H2], delete_files=True)
        assert fake.form() == {"hashes": f"{H1}|{H2}", "deleteFiles": "true"}


# ---------------------------------------------------------------- parsing and merging


def torrent_json(**fields: Any) -> dict[str, Any]:
    base = {"infohash_v1": H1, "infohash_v2": "", "name": "Фильм", "state": "downloading",
            "progress": 0.25, "dlspeed": 1000, "eta": 60, "size": 400, "total_size": 400,
            "amount_left": 300, "content_path": "/d/Фильм", "save_path": "/d", "category": "jellybit",
            "tags": "jellybit-01h, other", "added_on": 1_700_000_000, "completion_on": 0,
            "magnet_uri": "magnet:?xt=urn:btih:" + H1, "num_seeds": 3}
    return {**base, **fields}


async def test_torrent_fields_are_normalized() -> None:
    listed = [{"hash": H1, **torrent_json()},
              {"hash": H2.upper(), **torrent_json(progress=1, eta=8_640_000, tags="",
                                                   completion_on=1_700_000_100, infohash_v1=H2.upper())}]
    fake = FakeQbt(routes={"torrents/info": httpx.Response(200, json=listed)})
    async with fake.client() as client:
        first, second = await client.torrents(category="jellybit", tag="jellybit-01h")
    query = parse_qs(fake.requests[-1].url.query.decode())
    assert query == {"category": ["jellybit"], "tag": ["jellybit-01h"]}
    assert first.tags == ("jellybit-01h", "other")
    assert first.eta == 60
    assert first.completion_on is None
    assert first.name == "Фильм"
    assert first.progress == 0.25
    assert first.added_on == 1_700_000_000
    assert second.hash == H2
    assert second.infohash_v1 == H2
    assert second.progress == 1.0
    assert isinstance(second.progress, float)
    assert second.eta is None
    assert second.tags == ()
    assert second.completion_on == 1_700_000_100


async def test_sync_merges_partial_updates_and_resets_on_full_update() -> None:
    replies = [
        {"rid": 1, "full_update": True, "torrents": {H1: torrent_json(), H2: torrent_json(infohash_v1=H2)}},
        {"rid": 2, "torrents": {H1: {"progress": 0.75, "dlspeed": 5}, H2: {}}},
        {"rid": 3},
        {"rid": 4, "torrents": {H3: torrent_json(infohash_v1=H3, name="new")}, "torrents_removed": [H2]},
        {"rid": 5, "full_update": True, "torrents": {H3: torrent_json(infohash_v1=H3, name="new")}},
    ]
    fake = FakeQbt(routes={"sync/maindata": [httpx.Response(200, json=r) for r in replies]})
    async with fake.client() as client:
        first = await client.sync()
        assert first.full_update
        assert set(first.torrents) == {H1, H2}
        second = await client.sync()
        assert not second.full_update
        assert second.removed == ()
        assert second.torrents[H1].progress == 0.75
        assert second.torrents[H1].dlspeed == 5
        assert second.torrents[H1].name == "Фильм"
        assert second.torrents[H1].amount_left == 300
        assert second.torrents[H2] == first.torrents[H2]
        third = await client.sync()
        assert dict(third.torrents) == dict(second.torrents)
        fourth = await client.sync()
        assert set(fourth.torrents) == {H1, H3}
        assert fourth.removed == (H2,)
        fifth = await client.sync()
        assert fifth.full_update
        assert set(fifth.torrents) == {H3}
        assert fifth.removed == (H1,)
        with pytest.raises(TypeError):
            fifth.torrents[H1] = fifth.torrents[H3]  # type: ignore[index]
    rids = [parse_qs(r.url.query.decode())["rid"] for r in fake.requests if "sync" in r.url.path]
    assert rids == [["0"], ["1"], ["2"], ["3"], ["4"]]


async def test_files_keep_their_order_and_index() -> None:
    files = [{"index": 0, "name": "Show/S01E01.mkv", "size": 10, "progress": 1},
             {"name": "Show/Subs/S01E01.rus.srt", "size": 2, "progress": 0.5}]
    fake = FakeQbt(routes={"torrents/files": httpx.Response(200, text=json.dumps(files))})
    async with fake.client() as client:
        listed = await client.files("E" * 64)
    assert parse_qs(fake.requests[-1].url.query.decode()) == {"hash": ["e" * 40]}
    assert [(f.index, f.name, f.size, f.progress) for f in listed] == [
        (0, "Show/S01E01.mkv", 10, 1.0), (1, "Show/Subs/S01E01.rus.srt", 2, 0.5)]


async def test_files_of_an_unknown_torrent() -> None:
    async with FakeQbt(routes={"torrents/files": httpx.Response(404)}).client() as client:
        with pytest.raises(AdapterError, match=f"no torrent {H1}"):
            await client.files(H1)
