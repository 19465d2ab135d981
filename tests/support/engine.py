"""In-test implementations of the Recognizer and Layouter ports, and a builder for the engine.

The ports are small and scripted: a test says what the recognizer concludes and what the
layout outcome is, and may hold either one at a gate to observe serialization. Everything
else (store, state machine, worker, commands, qBittorrent client) is the real thing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from jellybit.adapters import resolver
from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.adapters.store import Store
from jellybit.config import PathsConfig, QbittorrentConfig, WorkerConfig
from jellybit.core.addresses import AllowList
from jellybit.core.links import TitleGroup
from jellybit.core.models import Download
from jellybit.core.ports import ApplyResult, LayoutPreview, PathPlace, RecognitionRequest, UndoResult
from jellybit.core.records import (
    Candidate,
    MediaType,
    Plan,
    PlanItem,
    Reason,
    Recognition,
    RecognitionDraft,
    Recommendation,
    Role,
)
from jellybit.core.states import State
from jellybit.core.store_records import ReconcileItem
from jellybit.engine.commands import Commands
from jellybit.engine.events import EventBus
from jellybit.engine.source_guard import SourceGuard
from jellybit.engine.worker import Worker
from tests.support.services import free_port


def source_guard(worker: Worker) -> SourceGuard:
    """The guard the app builds: the worker's allow-list of private hosts, the system resolver."""
    return SourceGuard(AllowList.parse(worker.qbt.allow_private_hosts), resolve=resolver.resolve)


def movie_draft(request: RecognitionRequest, *, automatic: bool = True) -> RecognitionDraft:
    """A movie recognition of every file; strong and matched when `automatic`."""
    items = tuple(PlanItem(f.path, f.size, Role.VIDEO) for f in request.files)
    title = request.overrides.get("title", "Test Movie")
    chosen = request.chosen
    candidates = (
        Candidate("tmdb", "603", MediaType.MOVIE, "Test Movie", 1999),
        Candidate("tmdb", "604", MediaType.MOVIE, "Test Movie Reloaded", 2003),
    )
    if chosen is not None:
        return RecognitionDraft(
            MediaType.MOVIE, title, chosen.year, Plan(items), provider=chosen.provider,
            provider_id=chosen.provider_id, confidence=1.0, recommendation=Recommendation.STRONG,
            candidates=tuple(replace(c, chosen=c.provider_id == chosen.provider_id) for c in candidates),
        )
    if automatic:
        return RecognitionDraft(MediaType.MOVIE, title, 1999, Plan(items), provider="tmdb", provider_id="603",
                                confidence=0.95, recommendation=Recommendation.STRONG, candidates=candidates)
    return RecognitionDraft(
        MediaType.MOVIE, title, None, Plan(items), confidence=0.4, recommendation=Recommendation.LOW,
        reasons=(Reason("no_match", "no confirmed metadata match", blocking=True),), candidates=candidates,
    )


def series_draft(request: RecognitionRequest, *, automatic: bool = True) -> RecognitionDraft:
    """A season pack: every file an episode of season 1, numbered in name order."""
    ordered = sorted(request.files, key=lambda f: f.path)
    items = tuple(PlanItem(f.path, f.size, Role.VIDEO, season=1, episodes=(n,))
                  for n, f in enumerate(ordered, 1))
    show = Candidate("tvdb", "81189", MediaType.SERIES, "Test Show", 2008)
    if automatic or request.chosen is not None:
        return RecognitionDraft(MediaType.SERIES, "Test Show", 2008, Plan(items), provider="tvdb",
                                provider_id="81189", confidence=0.95, recommendation=Recommendation.STRONG,
                                candidates=(replace(show, chosen=request.chosen is not None),))
    return RecognitionDraft(
        MediaType.SERIES, "Test Show", None, Plan(items), confidence=0.4, recommendation=Recommendation.LOW,
        reasons=(Reason("no_match", "no confirmed metadata match", blocking=True),), candidates=(show,),
    )


class ScriptedRecognizer:
    """Recognizer port: records every request; `automatic` decides strong vs. review; `series`
    recognizes a season pack instead of a movie."""

    def __init__(self, *, automatic: bool = True, series: bool = False) -> None:
        self.automatic = automatic
        self.series = series
        self.requests: list[RecognitionRequest] = []
        self.gate: asyncio.Event | None = None      # set by a test to hold recognition
        self.entered = asyncio.Event()

    async def recognize(self, request: RecognitionRequest) -> RecognitionDraft:
        """Return the scripted draft (after the gate opens, if a test closed it)."""
        self.requests.append(request)
        number = len(self.requests)
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        # raw_llm names the request, so a test can tell which recognition was kept.
        draft = (series_draft if self.series else movie_draft)(request, automatic=self.automatic)
        return replace(draft, raw_llm=f"request {number}")


class ScriptedLayouter:
    """Layouter port: targets under `Title (Year)/`, scripted outcomes, call records, optional gate."""

    def __init__(self) -> None:
        self.outcome = "done"
        self.collisions: tuple[str, ...] = ()
        self.undo_complete = True
        self.present: bool | None = True
        self.applied: list[tuple[str, Recognition]] = []
        self.applied_files: list[tuple[str, frozenset[str]]] = []
        self.undone: list[str] = []
        self.recovered = 0
        self.gate: asyncio.Event | None = None
        self.entered = asyncio.Event()
        self.held: str | None = None      # a better-copy question the preview asks about every video

    async def preview(self, download: Download, recognition: RecognitionDraft) -> LayoutPreview:
        """Compute targets for every item (no filesystem access); `held` makes the videos a question."""
        folder = f"{recognition.title} ({recognition.year})"
        held = self.held
        items = tuple(i.with_(library="movies", target=f"{folder}/{Path(i.source).name}",
                              status="held" if held and i.role is Role.VIDEO else "planned",
                              note=held if i.role is Role.VIDEO else None)
                      for i in recognition.plan.items)
        reasons = (Reason("better_copy", held, blocking=True),) if held else ()
        return LayoutPreview(plan=Plan(items, folder=folder), reasons=reasons)

    async def apply(self, download: Download, recognition: Recognition) -> ApplyResult:
        """Return the scripted outcome (after the gate opens, if a test closed it)."""
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        self.applied.append((download.id, recognition))
        message = "disk full" if self.outcome == "failed" else ""
        return ApplyResult(outcome=self.outcome, batch_id="b", linked=len(recognition.plan.items),
                           collisions=self.collisions, message=message)

    async def apply_files(self, download: Download, recognition: Recognition,
                          sources: frozenset[str]) -> ApplyResult:
        """Record the early layout of these files; the scripted outcome."""
        self.applied_files.append((download.id, sources))
        return ApplyResult(outcome=self.outcome, batch_id="e", linked=len(sources))

    def place_of(self, path: str) -> PathPlace:
        """Every path on one filesystem, inside downloads (early layout is safe)."""
        return PathPlace(path, 1, True)

    def check_library(self, media_type: MediaType) -> None:
        """No library on disk, so no library fault."""

    async def undo(self, download: Download) -> UndoResult:
        """Record the undo; `undo_complete` says whether every link went."""
        self.undone.append(download.id)
        if self.undo_complete:
            return UndoResult(removed=("/lib/a.mkv",), complete=True)
        return UndoResult(refused=(("/lib/a.mkv", "last copy"),), complete=False)

    async def recover(self) -> None:
        """Count recoveries."""
        self.recovered += 1

    async def relink(self, download: Download, recognition: Recognition | None = None) -> ApplyResult:
        """Like apply (the scripted outcome), with the recognition the download had."""
        assert recognition is not None, "the pipeline relinks with the download's last recognition"
        return await self.apply(download, recognition)

    async def targets_present(self, download: Download) -> bool | None:
        """The scripted answer."""
        return self.present

    async def targets_present_many(self, items: Sequence[ReconcileItem]) -> dict[str, bool | None]:
        """The scripted answer for each laid-out download."""
        return {item.id: self.present for item in items}

    async def title_groups(self) -> list[TitleGroup]:
        """No title folders: nothing is written anywhere."""
        return []


@dataclass
class Engine:
    """One assembled engine over a real store and a real qBittorrent client."""

    store: Store
    bus: EventBus
    client: QbittorrentClient
    recognizer: ScriptedRecognizer
    layouter: ScriptedLayouter
    worker: Worker
    commands: Commands
    done: list[str] = field(default_factory=list)

    async def poll_until(self, predicate: Callable[[], Awaitable[Any]], *, within: float = 20.0,
                         interval: float = 0.05) -> Any:
        """Run poll cycles until `await predicate()` is truthy; fail at the deadline."""
        deadline = asyncio.get_running_loop().time() + within
        while True:
            await self.worker.poll_once()
            value = await predicate()
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                pytest.fail(f"condition not met within {within} s")
            await asyncio.sleep(interval)

    async def state_is(self, download_id: str, *states: State) -> bool:
        """Tell whether the download is in one of the states."""
        return (await self.store.get_download(download_id)).state in states

    async def settle(self, download_id: str, *states: State, within: float = 20.0) -> Download:
        """Poll until the download reaches one of the states (stage tasks run meanwhile)."""
        try:
            await self.poll_until(lambda: self.state_is(download_id, *states), within=within)
        except pytest.fail.Exception:
            history = await self.store.transitions(download_id)
            last = history[-1] if history else None
            recognition = await self.store.current_recognition(download_id)
            why = [r.message for r in recognition.reasons] if recognition else []
            pytest.fail(f"download never reached {[s.value for s in states]}; it is "
                        f"{last.to_state if last else '?'} ({last.reason if last else ''}) {why}")
        return await self.store.get_download(download_id)

    async def path(self, download_id: str) -> list[tuple[str | None, str]]:
        """The download's transition history as (from, to) pairs."""
        return [(t.from_state.value if t.from_state else None, t.to_state.value)
                for t in await self.store.transitions(download_id)]


EngineFactory = Callable[..., Awaitable[Engine]]


def closed_qbittorrent() -> QbittorrentConfig:
    """A qBittorrent config pointing at a port nothing listens on."""
    return QbittorrentConfig(url=f"http://127.0.0.1:{free_port()}", password="x", timeout=2.0)


@pytest.fixture
async def make_engine(store: Store, tmp_path: Path) -> AsyncIterator[EngineFactory]:
    """Build engines: `await make_engine(qbt_config, worker={...}, automatic=True, client_cls=...)`."""
    clients: list[QbittorrentClient] = []
    workers: list[Worker] = []

    async def build(qbt: QbittorrentConfig | None = None, *, worker: dict[str, Any] | None = None,
                    automatic: bool = True, client_cls: type[QbittorrentClient] = QbittorrentClient,
                    reconnect_grace: float = 0.0, layouter: Any = None, paths: PathsConfig | None = None,
                    appear_timeout: float = 60.0) -> Engine:
        qbt = qbt or closed_qbittorrent()
        settings = {"poll_interval": 0.05, "retry_max_backoff": 0.2, "source_miss_threshold": 3,
                    "metadata_timeout": 600.0, "stall_timeout": 600.0, **(worker or {})}
        config = WorkerConfig(**settings)
        client = client_cls(qbt)
        clients.append(client)
        bus = EventBus()
        recognizer = ScriptedRecognizer(automatic=automatic)
        layout = layouter if layouter is not None else ScriptedLayouter()
        done: list[str] = []
        engine_worker = Worker(store, bus, client, recognizer, layout, worker=config, qbittorrent=qbt,
                               paths=paths or PathsConfig(downloads=tmp_path, movies=tmp_path / "movies",
                                                          series=tmp_path / "series"),
                               on_done=lambda d: done.append(d.id), reconnect_grace=reconnect_grace,
                               appear_timeout=appear_timeout)
        workers.append(engine_worker)
        await engine_worker.start()
        commands = Commands(store, bus, engine_worker, guard=source_guard(engine_worker))
        return Engine(store, bus, client, recognizer, layout, engine_worker, commands, done)

    yield build
    for engine_worker in workers:
        await engine_worker.serial.drain(5.0)
    for client in clients:
        await client.close()
