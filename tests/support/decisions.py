"""The whole product for the decision-rule suite: worker, qBittorrent, mosquitto, fakes, three LLM modes.

`decisions` (a fixture, parametrized by the test over `LLM_MODES`) builds the app as `build_app`
wires it, with MQTT on a real mosquitto, the real qbittorrent-nox, the local TMDB/TVDB/TVMaze
fakes and the fake OpenAI server, and:

- "llm":  the LLM answers each download from the case's `answer(listed)` function;
- "none": no LLM configured;
- "down": an LLM configured at a loopback port nothing listens on.

Downloads are added over MQTT (`add` with the base64 .torrent and the context) like any client
does; the test reads the final state and the library tree.
"""

from __future__ import annotations

import asyncio
import base64
import re
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from jellybit.app import App, build_app
from jellybit.client import JellybitClient
from jellybit.config import (
    Config,
    LayoutConfig,
    LlmConfig,
    MetadataConfig,
    MqttConfig,
    PathsConfig,
    StorageConfig,
    WorkerConfig,
)
from jellybit.core.states import State
from jellybit.protocol import Command
from tests.support.bridge import app_bridge
from tests.support.fake_openai import FakeOpenAI, Step
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent
from tests.support.services import free_port

LLM_MODES = ("llm", "none", "down")
SETTLED = (State.DONE, State.REVIEW, State.FAILED, State.CANCELLED)
_LINE = re.compile(r"^(f\d+) \| [^|]* \| [^|]* \| (.*)$", re.MULTILINE)

Answer = Callable[[Mapping[str, str]], dict[str, Any]]


@dataclass
class Case:
    """One download: its torrent name and files (sizes or contents), the context, the LLM's answer."""

    name: str
    files: Mapping[str, int | bytes]
    context: str = ""
    answer: Answer | None = None         # {line id: file path} -> the LLM's answer (mode "llm")
    seed: int = 0


@dataclass
class Outcome:
    """Where one download ended."""

    download_id: str
    state: State
    reasons: list[str] = field(default_factory=list)


def _listed(body: dict[str, Any]) -> dict[str, str]:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return dict(_LINE.findall(user))


class DecisionStack:
    """The running product plus an MQTT client; `run(case)` adds a download and waits for it."""

    def __init__(self, app: App, client: JellybitClient, paths: PathsConfig, qbittorrent: QbittorrentInstance,
                 mode: str) -> None:
        self.app = app
        self.client = client
        self.paths = paths
        self.qbittorrent = qbittorrent
        self.mode = mode
        self.answers: dict[str, Answer] = {}

    def respond(self, body: dict[str, Any]) -> Any:
        """The fake LLM's answer: the case whose torrent name the prompt carries."""
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        for name, answer in sorted(self.answers.items(), key=lambda kv: -len(kv[0])):
            if name in user:
                return answer(_listed(body))
        return Step(status=500, message="decision suite: no answer scripted for this download")

    async def add(self, case: Case) -> str:
        """Seed the case's files, add its .torrent over MQTT; return the download id."""
        if case.answer is not None:
            self.answers[case.name] = case.answer
        seeded = seeded_torrent(self.qbittorrent.data_dir, case.name, dict(case.files), seed=case.seed)
        response = await self.client.request(Command.ADD, {
            "torrent": base64.b64encode(seeded.torrent).decode(), "context": case.context})
        assert response.status == "ok", response.error
        return str(response.data.id)

    async def settle(self, download_id: str, within: float = 60.0, *, decided: bool = False,
                     applied: bool = False) -> Outcome:
        """Wait until the download rests in a settled or review state (`decided`: after a human's command;
        `applied`: after a human's apply, which recognizes again without asking the LLM)."""
        decided = decided or applied
        deadline = asyncio.get_running_loop().time() + within
        while True:
            download = await self.app.store.get_download(download_id)
            if download.state in SETTLED and not self.app.worker.serial.busy(download_id):
                recognition = await self.app.store.current_recognition(download_id)
                reasons = [f"{r.code}: {r.message}" for r in recognition.reasons] if recognition else []
                llm_failed = [r for r in reasons if r.startswith("llm_unavailable")]
                # In mode "llm" the LLM must really have answered, or the case proves nothing about it.
                # A human's decision lays out without the LLM: these checks are about the worker's own.
                assert decided or self.mode != "llm" or not llm_failed, llm_failed
                assert decided or self.mode != "down" or llm_failed or download.state is not State.DONE, \
                    reasons
                return Outcome(download_id, download.state, reasons)
            assert asyncio.get_running_loop().time() < deadline, (download.state, download.error_msg)
            await asyncio.sleep(0.05)

    async def run(self, case: Case) -> Outcome:
        """Add one case and wait for where it ends."""
        return await self.settle(await self.add(case))

    def tree(self) -> list[str]:
        """Every file in both libraries, as `movies/…` / `series/…`, sorted."""
        found = []
        for label, root in (("movies", self.paths.movies), ("series", self.paths.series)):
            files = [p for p in Path(root).rglob("*") if p.is_file()]
            found += [f"{label}/{p.relative_to(root).as_posix()}" for p in files]
        return sorted(found)

    async def get(self, download_id: str) -> dict[str, Any]:
        """The download's full detail over MQTT (`get`)."""
        response = await self.client.request(Command.GET, {"id": download_id})
        assert response.status == "ok", response.error
        return response.data.model_dump(mode="json", by_alias=True)


@pytest.fixture
async def decisions(request: pytest.FixtureRequest, qbittorrent: QbittorrentInstance, mosquitto: Any,
                    fake_tmdb: Any, fake_tvdb: Any, fake_tvmaze: Any, fake_openai: FakeOpenAI,
                    tmp_path: Path) -> AsyncIterator[DecisionStack]:
    """The product in LLM mode `request.param` ("llm" | "none" | "down"); `@pytest.mark.upgrades(policy)`."""
    mode = request.param
    marker = request.node.get_closest_marker("upgrades")
    layout = LayoutConfig(upgrades=marker.args[0] if marker else "ask")
    paths = PathsConfig(downloads=qbittorrent.data_dir, movies=tmp_path / "movies",
                        series=tmp_path / "series")
    for root in (paths.movies, paths.series):
        root.mkdir()
    llm = {
        "llm": LlmConfig(enabled=True, base_url=fake_openai.base_url, model="fake-model", timeout=10.0),
        "none": LlmConfig(),
        "down": LlmConfig(enabled=True, base_url=f"http://127.0.0.1:{free_port()}/v1", model="m",
                          timeout=2.0),
    }[mode]
    base = f"jb-{uuid.uuid4().hex[:8]}"
    config = Config(
        qbittorrent=qbittorrent.config(), paths=paths,
        storage=StorageConfig(database=tmp_path / "jellybit.db"), layout=layout,
        metadata=MetadataConfig(tmdb=fake_tmdb.config(), tvdb=fake_tvdb.config(),
                                tvmaze=fake_tvmaze.config()),
        llm=llm, mqtt=MqttConfig(url=mosquitto.url, base_topic=base, client_id=f"worker-{base}"),
        worker=WorkerConfig(poll_interval=0.05, provider_retry=0.2, provider_retry_max=1.0),
    )
    app = build_app(config)
    await app.start()
    client = JellybitClient(config.mqtt, name="decisions")
    try:
        # Requests sent before the worker subscribed would be lost: wait until it serves.
        await asyncio.wait_for(app_bridge(app).connected.wait(), 30)
        await client.__aenter__()
        stack = DecisionStack(app, client, paths, qbittorrent, mode)
        fake_openai.respond_with(stack.respond)
        yield stack
    finally:
        await _bounded(client.__aexit__(None, None, None), "the MQTT client did not disconnect")
        await _bounded(app.stop(), "the app did not stop")


async def _bounded(step: Any, what: str, within: float = 40.0) -> None:
    """Run one teardown step; one that hangs fails the test with every task's stack instead."""
    running = asyncio.ensure_future(step)
    done, _ = await asyncio.wait({running}, timeout=within)
    if running in done:
        running.result()
        return
    stacks = []
    for task in asyncio.all_tasks():
        if task is not asyncio.current_task():
            frames = task.get_stack(limit=12)
            stacks.append(f"{task.get_name()}: " + " <- ".join(
                f"{f.f_code.co_filename.rsplit('/', 2)[-1]}:{f.f_lineno} {f.f_code.co_name}" for f in frames))
    pytest.fail(f"{what} within {within:g} s:\n" + "\n".join(stacks))
