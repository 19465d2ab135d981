"""The whole stack on loopback for browser tests: a real worker process and a real panel process.

`Stack` writes one TOML for both (the test's broker and base topic, qBittorrent, a temp media tree,
the fake TMDB from tests/support/fake_metadata.py, posters from a loopback image server) and runs
`python -m jellybit --config FILE run|panel` as children without PYTEST_CURRENT_TEST
(NiceGUI would otherwise think it runs under pytest). Nothing here talks beyond 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import html
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from jellybit.config import load_config
from tests.support.fake_http import FakeHttpServer, LoggedRequest, Reply
from tests.support.fake_jellyfin import FakeJellyfin
from tests.support.fake_metadata import FakeTmdb, FakeTvdb, FakeTvmaze
from tests.support.network_guard import assert_loopback_config
from tests.support.services import free_port

ROOT = Path(__file__).resolve().parents[2]


class PosterServer(FakeHttpServer):
    """Serves an SVG "poster" for any path, so thumbnails load without the internet."""

    def route(self, request: LoggedRequest) -> Reply:
        """A labelled SVG rectangle named after the requested file, in a colour of its own."""
        name = html.escape(request.path.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("-", " ")[:40])
        hue = sum(map(ord, name)) * 47 % 360
        body = (f'<svg xmlns="http://www.w3.org/2000/svg" width="200" height="300">'
                f'<rect width="200" height="300" fill="hsl({hue},35%,30%)"/>'
                f'<text x="100" y="150" fill="#f8fafc" font-size="16" text-anchor="middle" '
                f'font-family="sans-serif">{name}</text></svg>')
        return Reply(200, body, {"Content-Type": "image/svg+xml"})


def child_env() -> dict[str, str]:
    """The environment for a child process: no PYTEST_CURRENT_TEST (NiceGUI pitfall), no proxies."""
    env = {k: v for k, v in os.environ.items()
           if k != "PYTEST_CURRENT_TEST" and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env["NO_PROXY"] = "*"
    return env


class Child:
    """One `jellybit … run|panel` process with its log file."""

    def __init__(self, command: str, config: Path, log: Path, cwd: Path) -> None:
        self.command = command
        self.config = config
        self.log = log
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it."""
        env = child_env()
        env["NICEGUI_STORAGE_PATH"] = str(self.cwd / ".nicegui")
        assert_loopback_config(load_config(self.config, env=env))
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "jellybit", "--config", str(self.config), self.command],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env, cwd=self.cwd)

    def stop(self, *, kill: bool = False) -> None:
        """SIGTERM (or SIGKILL) and wait."""
        if self.proc is None or self.proc.poll() is not None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def tail(self, lines: int = 40) -> str:
        """The end of its log, for failure messages."""
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""


class Stack:
    """Config, fakes and the two processes of one browser test module."""

    def __init__(self, root: Path, *, broker_url: str, base_topic: str, qbittorrent: Any, data_dir: Path,
                 tmdb: FakeTmdb, tvdb: FakeTvdb, tvmaze: FakeTvmaze, posters: PosterServer,
                 jellyfin: FakeJellyfin | None = None) -> None:
        self.root = root
        self.jellyfin = jellyfin
        self.data_dir = data_dir
        self.catalogue = tmdb.catalogue          # what a test adds here every fake serves
        self.movies = root / "media" / "movies"
        self.series = root / "media" / "series"
        for path in (self.movies, self.series):
            path.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = root / "jellybit.toml"
        self.config.write_text(f"""
[qbittorrent]
url = "{qbittorrent.url}"
username = "{qbittorrent.username}"
password = "{qbittorrent.password}"
save_path = "{data_dir}"

[paths]
downloads = "{data_dir}"
movies = "{self.movies}"
series = "{self.series}"

[storage]
database = "{root / 'jellybit.db'}"

[mqtt]
url = "{broker_url}"
base_topic = "{base_topic}"
client_id = "worker-{base_topic}"
discovery = false

[metadata.tmdb]
enabled = true
api_key = "{FakeTmdb.API_KEY}"
base_url = "{tmdb.base_url}"
image_base_url = "{posters.base_url}"

[metadata.tvdb]
enabled = true
api_key = "{FakeTvdb.API_KEY}"
base_url = "{tvdb.base_url}"

[metadata.tvmaze]
enabled = true
base_url = "{tvmaze.base_url}"

{self._jellyfin_section(root / "media")}
[worker]
poll_interval = 0.1

[panel]
host = "127.0.0.1"
port = {self.port}
base_url = "{self.url}"
request_timeout = 5.0
open = true

[log]
level = "INFO"
format = "text"
""", encoding="utf-8")
        self.worker = Child("run", self.config, root / "worker.log", root)
        self.panel = Child("panel", self.config, root / "panel.log", root)

    def _jellyfin_section(self, media: Path) -> str:
        """Jellyfin's libraries over the media tree, which its container sees as `/media`."""
        if self.jellyfin is None:
            return ""
        self.jellyfin.add_library("Movies", "movies", "/media/movies")
        self.jellyfin.add_library("Shows", "tvshows", "/media/series")
        self.jellyfin.mount("/media", media)
        return f"""
[jellyfin]
enabled = true
url = "{self.jellyfin.origin}"
api_key = "{self.jellyfin.API_KEY}"
debounce_seconds = 0.1
check_interval = 0.2

[[jellyfin.path_map]]
jellyfin = "/media"
local = "{media}"
"""

    def start(self) -> None:
        """Start the worker and the panel; wait until the panel answers HTTP."""
        self.worker.start()
        self.panel.start()
        deadline = time.monotonic() + 20
        with httpx.Client(timeout=1.0, trust_env=False) as probe:
            while time.monotonic() < deadline:
                assert self.panel.proc is not None
                if self.panel.proc.poll() is not None:
                    raise RuntimeError(f"the panel exited:\n{self.panel.tail()}")
                try:
                    if probe.get(f"{self.url}/status").status_code == 200:
                        return
                except httpx.TransportError:
                    time.sleep(0.05)
        raise RuntimeError(f"the panel did not answer within 20 s:\n{self.panel.tail()}")

    def stop(self) -> None:
        """Stop both processes."""
        self.panel.stop()
        self.worker.stop()
