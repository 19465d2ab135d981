"""A real qbittorrent-nox confined to loopback: one per session, a clean slate per test.

Fixtures: `qbittorrent_server` (session; the running process) and `qbittorrent` (function; a
fresh data directory, and every torrent, category and tag removed afterwards). Helpers build
content that already sits in the save path plus its .torrent (qBittorrent completes it by hash
check in about a second), trackerless magnets, and a loopback HTTP server that hands qBittorrent
a .torrent by URL. Nothing here sends traffic beyond 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from devstack.stack import qbittorrent_conf, qbt_password_hash

from jellybit.config import QbittorrentConfig
from tests.support import polling
from tests.support.fake_http import FakeHttpServer, LoggedRequest, Reply
from tests.support.services import free_port, require_binary
from tests.support.torrents import make_content, make_torrent

START_TIMEOUT = 20.0


@dataclass
class QbittorrentProcess:
    """One qbittorrent-nox with a throwaway profile under `root`; restartable on the same ports."""

    root: Path
    username: str = "admin"
    password: str = field(default_factory=lambda: "pw-" + secrets.token_hex(8))
    webui_port: int = field(default_factory=free_port)
    torrent_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _admin: httpx.Client | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """The WebUI base URL."""
        return f"http://127.0.0.1:{self.webui_port}"

    @property
    def profile_dir(self) -> Path:
        """The `--profile` directory (config, logs, resume data)."""
        return self.root / "profile"

    @property
    def data_root(self) -> Path:
        """qBittorrent's default save path; tests use sub-directories of it."""
        return self.root / "data"

    @property
    def log_file(self) -> Path:
        """qBittorrent's own log file."""
        return self.profile_dir / "qBittorrent" / "data" / "logs" / "qbittorrent.log"

    @property
    def running(self) -> bool:
        """Tell whether the process is alive."""
        return self.proc is not None and self.proc.poll() is None

    def write_config(self) -> None:
        """Write the loopback-only config (qBittorrent rewrites it on exit; we rewrite it on start)."""
        conf = self.profile_dir / "qBittorrent" / "config" / "qBittorrent.conf"
        conf.parent.mkdir(parents=True, exist_ok=True)
        self.data_root.mkdir(parents=True, exist_ok=True)
        conf.write_text(qbittorrent_conf(
            torrent_port=self.torrent_port, webui_port=self.webui_port, save_path=self.data_root,
            username=self.username, password_hash=qbt_password_hash(self.password), fast=True,
        ))

    def start(self) -> None:
        """Start qbittorrent-nox and wait until the WebUI answers."""
        if self.running:
            return
        binary = require_binary("qbittorrent-nox")
        self.write_config()
        env = {**os.environ, "HOME": str(self.profile_dir)}
        self.proc = subprocess.Popen(
            [binary, f"--profile={self.profile_dir}", f"--webui-port={self.webui_port}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
        )
        deadline = time.monotonic() + START_TIMEOUT
        with httpx.Client(timeout=1.0) as probe:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                    raise RuntimeError(f"qbittorrent-nox exited with {self.proc.returncode}: {err}")
                try:
                    probe.get(f"{self.url}/api/v2/app/version")  # 403 before login is "up"
                    return
                except httpx.TransportError:
                    time.sleep(0.03)
        self.stop()
        raise RuntimeError(f"qbittorrent-nox did not answer within {START_TIMEOUT} s")

    def stop(self, timeout: float = 10.0) -> None:
        """Stop it with SIGTERM (clean shutdown, resume data saved); SIGKILL if it hangs."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def kill(self) -> None:
        """SIGKILL it (no clean shutdown), for crash tests."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.stop()

    @contextlib.contextmanager
    def admin(self) -> Iterator[httpx.Client]:
        """A logged-in synchronous client for test set-up and checks (not the code under test)."""
        if self._admin is None:
            self._admin = httpx.Client(base_url=f"{self.url}/api/v2/", timeout=10.0)
        client = self._admin
        if client.get("app/version").status_code == 403:  # first use, or the server restarted
            reply = client.post("auth/login", data={"username": self.username, "password": self.password})
            if reply.text.strip() not in ("Ok.", ""):
                raise RuntimeError(f"test admin login failed: HTTP {reply.status_code}")
        yield client

    def reset(self) -> None:
        """Remove every torrent (keeping data on disk), category and tag."""
        with self.admin() as client:
            client.post("torrents/delete", data={"hashes": "all", "deleteFiles": "false"})
            deadline = time.monotonic() + 10
            while client.get("torrents/info").json():
                if time.monotonic() > deadline:
                    raise RuntimeError("qBittorrent did not delete every torrent within 10 s")
                time.sleep(0.02)
            categories = list(client.get("torrents/categories").json())
            if categories:
                client.post("torrents/removeCategories", data={"categories": "\n".join(categories)})
            tags = client.get("torrents/tags").json()
            if tags:
                client.post("torrents/deleteTags", data={"tags": ",".join(tags)})


@dataclass(frozen=True)
class QbittorrentInstance:
    """What one test gets: where qBittorrent is, its credentials, and a data dir of its own."""

    url: str
    username: str
    password: str
    data_dir: Path
    process: QbittorrentProcess

    def config(self, **overrides: Any) -> QbittorrentConfig:
        """A QbittorrentConfig pointing at this instance (save path = the test's data dir)."""
        values: dict[str, Any] = {
            "url": self.url, "username": self.username, "password": self.password,
            "save_path": str(self.data_dir), "timeout": 10.0,
        }
        values.update(overrides)
        return QbittorrentConfig(**values)


@pytest.fixture(scope="session")
def qbittorrent_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QbittorrentProcess]:
    """One real qbittorrent-nox for the whole session, stopped cleanly at the end."""
    server = QbittorrentProcess(tmp_path_factory.mktemp("qbittorrent"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def qbittorrent(qbittorrent_server: QbittorrentProcess) -> Iterator[QbittorrentInstance]:
    """A clean slate on the shared qBittorrent: a fresh data sub-dir; all torrents removed after."""
    server = qbittorrent_server
    server.start()  # a previous test may have stopped it
    data_dir = Path(tempfile.mkdtemp(prefix="t-", dir=server.data_root))
    yield QbittorrentInstance(server.url, server.username, server.password, data_dir, server)
    server.start()
    server.reset()


# ---------------------------------------------------------------- torrents for the tests


@dataclass(frozen=True)
class SeededTorrent:
    """Content already in the save path plus its .torrent and infohashes."""

    name: str
    content: Path
    torrent: bytes
    infohash_v1: str
    infohash_v2: str

    def hashes(self) -> set[str]:
        """The real infohashes (v1 and/or v2)."""
        return {h for h in (self.infohash_v1, self.infohash_v2) if h}


def _skip(data: bytes, i: int) -> int:
    """Index just past the bencoded value starting at `i`."""
    lead = data[i:i + 1]
    if lead == b"i":
        return data.index(b"e", i) + 1
    if lead in (b"l", b"d"):
        i += 1
        while data[i:i + 1] != b"e":
            i = _skip(data, i)
        return i + 1
    colon = data.index(b":", i)
    return colon + 1 + int(data[i:colon])


def _raw_info(torrent: bytes) -> bytes:
    """The `info` dict exactly as it appears in the file (torrentfile does not sort its keys)."""
    i = 1
    while torrent[i:i + 1] != b"e":
        key_end = _skip(torrent, i)
        value_end = _skip(torrent, key_end)
        if torrent[i:key_end] == b"4:info":
            return torrent[key_end:value_end]
        i = value_end
    raise ValueError("no info dict")


def infohashes(torrent: bytes) -> tuple[str, str]:
    """(v1, v2) infohashes of .torrent bytes; "" where the torrent has none of that kind."""
    raw = _raw_info(torrent)
    v1 = hashlib.sha1(raw).hexdigest() if b"6:pieces" in raw else ""
    v2 = hashlib.sha256(raw).hexdigest() if b"12:meta versioni2e" in raw else ""
    return v1, v2


def seeded_torrent(save_path: Path, name: str, files: dict[str, int | bytes] | None = None, *,
                   kind: str = "v1", seed: int = 0) -> SeededTorrent:
    """Create `save_path/name/...` and a trackerless .torrent of it (kind v1 | v2 | hybrid)."""
    files = files or {"track0.bin": 96_000, "sub/track1.bin": 64_000}
    content = make_content(save_path, name, files, seed=seed)
    torrent = make_torrent(content, kind)
    v1, v2 = infohashes(torrent)
    return SeededTorrent(name, content, torrent, v1, v2)


def magnet(infohash: str | None = None, name: str | None = None) -> str:
    """A trackerless v1 magnet (random hash by default); it stays in metaDL without peers."""
    link = f"magnet:?xt=urn:btih:{infohash or secrets.token_hex(20)}"
    return link + (f"&dn={quote(name)}" if name else "")


def wait_for(predicate: Any, timeout: float = 15.0, interval: float = 0.05) -> Any:
    """Poll `predicate()` until it returns something truthy; fail the test at the deadline."""
    return polling.wait_for(predicate, within=timeout, interval=interval)


async def eventually(probe: Any, within: float = 15.0, interval: float = 0.05) -> Any:
    """Await `probe()` until it returns something truthy; fail the test at the deadline."""
    return await polling.until(probe, within=within, interval=interval)


# ---------------------------------------------------------------- serving a .torrent by URL


class TorrentFileServer(FakeHttpServer):
    """A loopback HTTP server that serves fixed bytes per path and records what was fetched."""

    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__()
        self.files = dict(files)

    @property
    def fetched(self) -> list[str]:
        """The request targets, in order."""
        return [r.target for r in self.requests]

    def route(self, request: LoggedRequest) -> Reply:
        """The file at that path, or 404."""
        body = self.files.get(request.path)
        if body is None:
            return Reply(404, b"")
        return Reply(200, body, {"Content-Type": "application/x-bittorrent"})

    def __enter__(self) -> TorrentFileServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
