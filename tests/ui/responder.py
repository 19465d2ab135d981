"""A test responder for the panel: the real MQTT bridge over the real broker, with scripted state.

It publishes retained `availability`, `info`, `summary`, `downloads/<id>` and `reviews/<id>` and
answers every command through `jellybit.transports.mqtt.MqttBridge` (the worker's own transport),
so the panel sees exactly the protocol. The engine behind it is a dict: enough for page logic.
Tests script errors (`fail`), silence (`silent`) and read what was requested (`requests`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator
from typing import Any

from jellybit.config import MqttConfig
from jellybit.errors import InvalidState, JellybitError, NotFound
from jellybit.ident import new_id
from jellybit.protocol import (
    AVAILABILITY_OFFLINE,
    AVAILABILITY_ONLINE,
    COMMAND_STATES,
    Command,
    DownloadPayload,
    InfoPayload,
    Request,
    ReviewPayload,
    SummaryPayload,
    SystemStatus,
    Topics,
)
from jellybit.transports.mqtt import Message, MqttBridge, encode

NOW = "2026-01-02T03:04:05.000000Z"
FOLDER = "The Matrix (1999) [tmdbid-603]"


class ScriptedError(JellybitError):
    """An error response a test asked for."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def download(download_id: str | None = None, **fields: Any) -> DownloadPayload:
    """A download payload with sensible defaults."""
    values: dict[str, Any] = {"id": download_id or new_id(), "name": "Some.Release.1080p",
                              "state": "downloading",
                              "created_at": NOW, "updated_at": NOW}
    values.update(fields)
    return DownloadPayload(**values)


def review(d: DownloadPayload, **fields: Any) -> ReviewPayload:
    """A review payload for a download in review, with two candidates and a two-file plan."""
    values: dict[str, Any] = {
        "id": d.id, "name": d.name, "media_type": "movie", "title": "The Matrix", "year": 1999,
        "confidence": 0.62, "recommendation": "medium",
        "reasons": [{"code": "year_unknown", "message": "the release gives no year", "weight": 0.05,
                     "blocking": False,
                     "meaning": "the release gives no year to tell films of one title apart"},
                    {"code": "small_margin", "message": "two candidates are close to each other",
                     "weight": 0.15, "blocking": True,
                     "meaning": "the runner-up is nearly as good as the best candidate"}],
        "candidates": [
            {"id": "c1", "provider": "tmdb", "provider_id": "603", "media_type": "movie",
             "title": "The Matrix", "year": 1999, "url": "https://www.themoviedb.org/movie/603",
             "poster_url": None, "distance": 0.05, "chosen": False, "country": "US",
             "network": "Warner Bros.", "overview": "A hacker learns what the Matrix is. " * 8,
             "links": {"tmdb": "https://www.themoviedb.org/movie/603",
                       "imdb": "https://www.imdb.com/title/tt0133093/"},
             "evidence": [{"verdict": "match", "text": "title “The Matrix”"},
                          {"verdict": "match", "text": "country US", "source": "your context"}]},
            {"id": "c2", "provider": "tmdb", "provider_id": "604", "media_type": "movie",
             "title": "The Matrix Reloaded", "year": 2003, "url": None, "poster_url": None,
             "distance": 0.3, "chosen": False,
             "evidence": [{"verdict": "mismatch", "text": "title “The Matrix Reloaded”; the release says "
                                                         "“The Matrix”"}]},
        ],
        "recommended": "c1",
        "plan": [
            {"source": f"{d.name}/movie.mkv", "size": 1_500_000_000, "role": "video", "library": "movies",
             "target": f"{FOLDER}/{FOLDER}.mkv", "status": "planned"},
            {"source": f"{d.name}/movie.en.srt", "size": 40_000, "role": "subtitle", "library": "movies",
             "target": f"{FOLDER}/{FOLDER}.mkv", "status": "collision"},
        ],
        "hints": [], "requested_at": NOW,
    }
    values.update(fields)
    return ReviewPayload(**values)


class _Results:
    def __init__(self) -> None:
        self.stored: dict[tuple[str, str], str] = {}

    async def command_result(self, command: str, transaction_id: str) -> str | None:
        return self.stored.get((command, transaction_id))

    async def save_command_result(self, command: str, transaction_id: str, response: str) -> bool:
        self.stored[(command, transaction_id)] = response
        return True


class FakeWorker:
    """The scripted worker; `async with FakeWorker(mqtt) as worker:` runs it on the broker."""

    def __init__(self, mqtt: MqttConfig) -> None:
        self.mqtt = mqtt
        self.topics = Topics(mqtt.base_topic, mqtt.discovery_prefix)
        self.downloads: dict[str, DownloadPayload] = {}
        self.reviews: dict[str, ReviewPayload] = {}
        self.history: list[DownloadPayload] = []       # known to `list` only (outside the retained window)
        self.links: dict[str, list[dict[str, Any]]] = {}
        self.hints: dict[str, list[str]] = {}
        self.titles: list[dict[str, Any]] = []
        self.decided: dict[str, list[dict[str, Any]]] = {}   # id -> what a human's apply added
        self.requests: list[tuple[Command, dict[str, Any]]] = []
        self.errors: dict[Command, tuple[str, str]] = {}
        self.silent: set[Command] = set()
        self.info = InfoPayload(version="0.1.0", started_at=NOW,
                                qbittorrent=SystemStatus(connected=True, version="v4.5.2"),
                                llm=SystemStatus(enabled=False),
                                metadata={"tmdb": SystemStatus(connected=True)},
                                jellyfin=SystemStatus(connected=False, detail="connection refused"),
                                telegram=SystemStatus(connected=False, state="refused",
                                                      detail="Telegram refused the bot token",
                                                      hint="check JELLYBIT_TELEGRAM_TOKEN"))
        self._queue: asyncio.Queue[list[Message]] = asyncio.Queue()
        handlers = {command: self._handler(command) for command in Command}
        self.bridge = MqttBridge(mqtt, handlers=handlers, state=self, results=_Results(),
                                 min_backoff=0.05, max_backoff=0.2)
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> FakeWorker:
        self._task = asyncio.create_task(self.bridge.run())
        await asyncio.wait_for(self.bridge.connected.wait(), 10)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.bridge.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    # ------------------------------------------------------------ state source

    async def snapshot(self) -> list[Message]:
        """Every retained message (the bridge publishes `online` after these)."""
        messages = [Message(self.topics.info, encode(self.info)),
                    Message(self.topics.summary, encode(self.summary()))]
        messages += [Message(self.topics.download(d.id), encode(d)) for d in self.downloads.values()]
        messages += [Message(self.topics.review(r.id), encode(r)) for r in self.reviews.values()]
        return messages

    async def updates(self) -> AsyncIterator[list[Message]]:
        """Batches queued by `put` and the command handlers."""
        while True:
            yield await self._queue.get()

    def summary(self) -> SummaryPayload:
        """Counts per state of the retained downloads."""
        states: dict[str, int] = {}
        for d in self.downloads.values():
            states[d.state] = states.get(d.state, 0) + 1
        return SummaryPayload(states=states, in_review=states.get("review", 0),
                              downloading=states.get("downloading", 0), failed=states.get("failed", 0))

    def put(self, d: DownloadPayload, r: ReviewPayload | None = None) -> DownloadPayload:
        """Publish a download (and its review request, or clear it)."""
        self.downloads[d.id] = d
        batch = [Message(self.topics.download(d.id), encode(d))]
        if r is not None:
            self.reviews[d.id] = r
            batch.append(Message(self.topics.review(d.id), encode(r)))
        elif d.id in self.reviews:
            del self.reviews[d.id]
            batch.append(Message(self.topics.review(d.id), None))
        batch.append(Message(self.topics.summary, encode(self.summary())))
        self._queue.put_nowait(batch)
        return d

    def availability(self, online: bool) -> None:
        """Publish availability as the real worker does (offline = its Last Will)."""
        payload = (AVAILABILITY_ONLINE if online else AVAILABILITY_OFFLINE).encode()
        self._queue.put_nowait([Message(self.topics.availability, payload, force=True)])

    # ------------------------------------------------------------ commands

    def _handler(self, command: Command) -> Any:
        async def handle(request: Request) -> Any:
            body = request.model_dump(exclude_none=True)
            self.requests.append((command, body))
            if command in self.silent:
                await asyncio.Event().wait()
            if command in self.errors:
                raise ScriptedError(*self.errors[command])
            return await getattr(self, f"_{command.value}")(body)
        return handle

    def _get_download(self, body: dict[str, Any]) -> DownloadPayload:
        d = self.downloads.get(body.get("id", ""))
        d = d or next((h for h in self.history if h.id == body.get("id")), None)
        if d is None:
            raise NotFound(f"unknown download id {body.get('id')!r}")
        return d

    def _move(self, d: DownloadPayload, state: str, **fields: Any) -> dict[str, Any]:
        moved = DownloadPayload.model_validate({**d.model_dump(), "state": state, "updated_at": NOW,
                                                **fields})
        self.put(moved, self.reviews.get(d.id) if state == "review" else None)
        return moved.model_dump(mode="json")

    async def _add(self, body: dict[str, Any]) -> dict[str, Any]:
        source = body.get("source") or "uploaded.torrent"
        for d in self.downloads.values():
            if source and source in d.infohashes:
                return {"id": d.id, "created": False, "joined": True, "settled_before": [],
                        "added_hashes": [], "download": d.model_dump(mode="json")}
        d = self.put(download(name=source[-60:], state="queued", context=body.get("context", ""),
                              infohashes=[source] if len(source) == 40 else []))
        return {"id": d.id, "created": True, "joined": False, "settled_before": [], "added_hashes": [],
                "download": d.model_dump(mode="json")}

    async def _get(self, body: dict[str, Any]) -> dict[str, Any]:
        d = self._get_download(body)
        r = self.reviews.get(d.id)
        recognition = None
        if r is not None:
            recognition = {"id": f"r-{d.id}", "attempt_no": 1, "created_at": NOW,
                           "media_type": r.media_type, "title": r.title, "year": r.year, "provider": None,
                           "provider_id": None, "confidence": r.confidence,
                           "recommendation": r.recommendation, "recommended": r.recommended,
                           "reasons": [x.model_dump() for x in r.reasons],
                           "candidates": [c.model_dump() for c in r.candidates],
                           "plan": [p.model_dump() for p in r.plan], "folder": FOLDER}
        timeline = [{"id": "t1", "at": NOW, "from": None, "to": "queued", "reason": "added",
                     "actor": "human"},
                    {"id": "t2", "at": NOW, "from": "queued",
                     "to": "review" if d.id in self.decided else d.state, "reason": "scripted",
                     "actor": "worker"}, *self.decided.get(d.id, [])]
        return {"download": d.model_dump(mode="json"), "timeline": timeline, "recognition": recognition,
                "hints": self.hints.get(d.id, []), "overrides": {},
                "links": copy.deepcopy(self.links.get(d.id, []))}

    async def _list(self, body: dict[str, Any]) -> dict[str, Any]:
        items = [*self.downloads.values(), *self.history]
        if body.get("states"):
            items = [d for d in items if d.state in body["states"]]
        if body.get("text"):
            items = [d for d in items if body["text"].casefold() in d.name.casefold()]
        limit, offset = body.get("limit", 50), body.get("offset", 0)
        return {"items": [d.model_dump(mode="json") for d in items[offset:offset + limit]],
                "total": len(items), "limit": limit, "offset": offset}

    async def _titles(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return copy.deepcopy(self.titles)

    def _require(self, d: DownloadPayload, command: str) -> None:
        """The worker's rule, from the one table it keeps (`COMMAND_STATES`)."""
        if d.state not in COMMAND_STATES[command]:
            raise InvalidState(f"{command} is not possible in state {d.state}")

    async def _apply(self, body: dict[str, Any]) -> dict[str, Any]:
        d = self._get_download(body)
        self._require(d, "apply")
        target = f"/lib/movies/{FOLDER}/{FOLDER}.mkv"
        self.links[d.id] = [{"id": "l1", "batch": "b1",
                             "source": f"/dl/{d.name}/movie.mkv", "target": target, "kind": "video",
                             "status": "linked", "size": 1, "message": None}]
        self.decided[d.id] = [
            {"id": "t3", "at": NOW, "from": "review", "to": "applying", "reason": "apply",
             "actor": "human"},
            {"id": "t4", "at": NOW, "from": "applying", "to": "done", "reason": "laid out",
             "actor": "worker"}]
        return self._move(d, "done", title="The Matrix", year=1999, settled_at=NOW)

    async def _refine(self, body: dict[str, Any]) -> dict[str, Any]:
        d = self._get_download(body)
        self._require(d, "refine")
        self.hints.setdefault(d.id, []).append(body["hint"])
        return self._move(d, "review")

    async def _reject(self, body: dict[str, Any]) -> dict[str, Any]:
        d = self._get_download(body)
        self._require(d, "reject")
        return self._move(d, "cancelled", settled_at=NOW)

    async def _defer(self, body: dict[str, Any]) -> dict[str, Any]:
        d = self._get_download(body)
        self._require(d, "defer")
        return self._move(d, "review", defer_until="2026-01-03T03:04:05.000000Z")

    async def _undo(self, body: dict[str, Any]) -> dict[str, Any]:
        d = self._get_download(body)
        self._require(d, "undo")
        removed = [link["target"] for link in self.links.get(d.id, [])]
        for link in self.links.get(d.id, []):
            link["status"] = "removed"
        return {"download": self._move(d, "reverted"), "removed": removed, "refused": [], "complete": True}

    async def _retry(self, body: dict[str, Any]) -> dict[str, Any]:
        d = self._get_download(body)
        self._require(d, "retry")
        return self._move(d, "queued", settled_at=None, error=None)

    async def _cancel(self, body: dict[str, Any]) -> dict[str, Any]:
        d = self._get_download(body)
        self._require(d, "cancel")
        return self._move(d, "cancelled", settled_at=NOW)

    async def _relink(self, body: dict[str, Any]) -> dict[str, Any]:
        d = self._get_download(body)
        self._require(d, "relink")
        return self._move(d, "applying")

    async def _delete_title(self, body: dict[str, Any]) -> dict[str, Any]:
        before = len(self.titles)
        self.titles = [t for t in self.titles if (t["provider"], t["provider_id"])
                       != (body["provider"], body["provider_id"])]
        if len(self.titles) == before:
            raise NotFound(f"no laid-out title {body['provider']}:{body['provider_id']}")
        return {"provider": body["provider"], "provider_id": body["provider_id"], "reverted": [],
                "deleted_torrents": [], "removed_folders": [], "kept_folders": [],
                "complete": True}
