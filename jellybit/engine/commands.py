"""The one in-process API every transport calls (MQTT, CLI, panel, Telegram).

Each method validates its arguments and the download's state *before* any side effect,
runs under the download's lock (so it never interleaves with a poll or a pipeline stage of
the same download), and returns a frozen result or raises a domain error from
`jellybit.errors`: NotFound (unknown or malformed id), InvalidState ("<command> is not
possible in state X"), InvalidArgument, Conflict, ConfirmationRequired, AdapterError.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import Any

from jellybit import __version__, clock, ident
from jellybit.config import WorkerConfig
from jellybit.core.limits import MAX_HINT_CHARS, MAX_LIST_LIMIT, MAX_LIST_OFFSET, MAX_REASON_CHARS
from jellybit.core.models import Download
from jellybit.core.quality import UpgradeChoice
from jellybit.core.records import MediaType, Recognition
from jellybit.core.states import ACTIVE_STATES, COMMAND_STATES, Actor, State, can_transition
from jellybit.core.store_port import StorePort
from jellybit.core.store_records import RowPage
from jellybit.engine import ingest as ingest_module
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.results import (
    AddOutcome,
    DownloadDetail,
    DownloadPage,
    DownloadView,
    QbittorrentStatus,
    Status,
    Summary,
    TitleDeleteOutcome,
    UndoOutcome,
)
from jellybit.engine.source_guard import SourceGuard
from jellybit.engine.validation import (
    PROVIDERS,
    clean_optional,
    clean_required,
    parse_until,
    validate_overrides,
)
from jellybit.engine.worker import Worker
from jellybit.errors import AdapterError, ConfirmationRequired, InvalidArgument, InvalidState, NotFound

UPGRADE_CHOICES = tuple(c.value for c in UpgradeChoice)
HELD = "held"            # a plan item's status while its better-copy question waits


def _undo_reason(removed: int) -> str:
    return f"undo: {removed} link{'' if removed == 1 else 's'} removed"


def _page_filter(states: Iterable[object] | None, text: object, limit: int,
                 offset: int) -> tuple[builtins.list[State] | None, str | None]:
    """A list's states and search text, checked with its limit and offset."""
    wanted = None
    if states is not None:
        if isinstance(states, str):
            states = [states]
        try:
            wanted = [State(s) for s in states]
        except ValueError:
            raise InvalidArgument(f"unknown state in {builtins.list(states)!r}; states are "
                                  + ", ".join(s.value for s in State)) from None
    query = clean_optional(text, limit=200, what="the text")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidArgument(f"'limit' must be a whole number from 1 to {MAX_LIST_LIMIT}")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_LIST_OFFSET:
        raise InvalidArgument(f"'offset' must be a whole number from 0 to {MAX_LIST_OFFSET}")
    return wanted, query


def retry_target(current: State, stopped_at: State | None, awaiting_files: bool = False) -> State:
    """The stage a retry resumes: where the download stopped, as the transition table allows.

    Download-stage failures resume at `queued`: the worker looks for the torrent in
    qBittorrent first and re-adds it only when it is not there. So does a download that stopped
    while its files still downloaded (recognized early), whatever stage it had reached.
    """
    if stopped_at in (State.QUEUED, State.DOWNLOADING, None) or awaiting_files:
        wanted = State.QUEUED
    elif stopped_at in (State.RECOGNIZING, State.REVIEW):
        wanted = State.RECOGNIZING
    else:  # applying, or a laid-out state (undo came from done / target_missing / orphaned)
        wanted = State.APPLYING
    for target in (wanted, State.RECOGNIZING, State.QUEUED):
        if can_transition(current, target):
            return target
    raise InvalidState(f"retry is not possible in state {current}")


class Commands:
    """Every command of spec §7, over the store, the worker and the layouter."""

    def __init__(self, store: StorePort, bus: EventBus, worker: Worker, *,
                 worker_config: WorkerConfig | None = None, tag_prefix: str | None = None,
                 parse: ingest_module.TorrentParser = ingest_module.parse_here,
                 guard: SourceGuard) -> None:
        self.store = store
        self.bus = bus
        self.worker = worker
        self.serial = worker.serial
        self.layouter = worker.layouter
        self.max_torrent_bytes = (worker_config or worker.config).max_torrent_bytes
        self.tag_prefix = tag_prefix if tag_prefix is not None else worker.qbt.tag_prefix
        self.parse = parse
        self.guard = guard

    # ------------------------------------------------------------ helpers

    async def _load(self, download_id: object) -> Download:
        return await self.store.get_download(ident.parse_id(download_id))

    @asynccontextmanager
    async def _locked(self, download: Download, command: str) -> AsyncIterator[Download]:
        """The download read again under its lock, refused unless `COMMAND_STATES` allows the command."""
        async with self.serial.serialized(download.id):
            download = await self.store.get_download(download.id)
            if download.state not in COMMAND_STATES[command]:
                raise InvalidState(f"{command} is not possible in state {download.state}")
            yield download

    # ------------------------------------------------------------ add

    async def add(self, *, source: str | None = None, torrent: bytes | None = None,
                  context: str = "") -> AddOutcome:
        """Accept a magnet, URL, infohash or .torrent; joins the active download with the same hash."""
        result = await ingest_module.ingest(
            self.store, source=source, torrent=torrent, context=context,
            max_torrent_bytes=self.max_torrent_bytes, tag_prefix=self.tag_prefix, actor=Actor.HUMAN,
            parse=self.parse, guard=self.guard,
        )
        download = result.download
        if result.created:
            self.bus.publish(Event(EventKind.ADDED, download.id, name=download.display_name,
                                   to_state=download.state, reason="added", actor=Actor.HUMAN))
        elif result.added_hashes:
            self.bus.publish(Event(EventKind.DOWNLOAD_UPDATED, download.id, name=download.display_name,
                                   to_state=download.state, data={"infohashes": list(result.added_hashes)}))
        self.worker.wake()
        return AddOutcome(download, result.created, tuple(result.added_hashes), tuple(result.settled_before))

    # ------------------------------------------------------------ review decisions

    async def apply(self, download_id: object, *, candidate_id: object = None,
                    overrides: Mapping[str, Any] | None = None) -> Download:
        """review → applying: lay out now (a human decided), optionally with a candidate and overrides."""
        download = await self._load(download_id)
        chosen = ident.parse_id(candidate_id, "candidate") if candidate_id is not None else None
        async with self._locked(download, "apply") as download:
            recognition = await self.store.current_recognition(download.id)
            sources = {i.source for i in recognition.plan.items} if recognition else set()
            pinned = validate_overrides(overrides, sources) if overrides else {}
            # A plain Apply cannot answer the better-copy question; another candidate or corrections
            # may (the film was another one): the preview then decides again.
            if recognition is not None and chosen is None and not pinned and any(
                    i.status == HELD for i in recognition.plan.items):
                raise InvalidArgument("a copy of this film or episode is already in the library: choose "
                                      "keep_both, replace or skip (the upgrade command)")
            offered = {c.id: c for c in recognition.candidates} if recognition else {}
            if chosen is not None and chosen not in offered:
                raise NotFound(f"unknown candidate id {chosen!r} for download {download.id}")
            # The target library's fault now, in its words, before anything changes.
            media = pinned.get("media_type") or (offered[chosen].media_type if chosen is not None else None) \
                or (recognition.media_type if recognition else None)
            if media:
                self.layouter.check_library(MediaType(media))
            if chosen is not None and recognition is not None and recognition.plan.films:
                stored = (await self.store.overrides(download.id)).get("files") or {}
                pinned, left = pin_film(recognition, chosen, pinned, stored)
                if left:
                    # one film of a pack decided, others still unsure: recognize again with it pinned
                    # and ask about the next; once every film is sure the pack lays itself out
                    await self.store.set_overrides(download.id, pinned)
                    download = await self.serial.change(
                        download.id, State.RECOGNIZING, actor=Actor.HUMAN, expected=State.REVIEW,
                        reason=f"apply: a film decided, {left} more to decide")
                    self.worker.start_stage(download)
                    return download
            if chosen is not None:
                await self.store.choose_candidate(download.id, chosen)
            if pinned:
                await self.store.set_overrides(download.id, pinned)
            download = await self.serial.change(download.id, State.APPLYING, reason="apply",
                                                actor=Actor.HUMAN, expected=State.REVIEW)
            self.worker.start_stage(download, mode="human")
        return download

    async def upgrade(self, download_id: object, *, choice: object) -> Download:
        """review → applying: answer the better-copy question (keep_both | replace | skip) and lay out."""
        download = await self._load(download_id)
        if choice not in UPGRADE_CHOICES:
            raise InvalidArgument(f"'choice' must be one of {', '.join(UPGRADE_CHOICES)}")
        async with self._locked(download, "upgrade") as download:
            recognition = await self.store.current_recognition(download.id)
            if recognition is None or not any(i.status == HELD for i in recognition.plan.items):
                raise InvalidArgument("this review asks nothing about a copy already in the library; "
                                      "use apply")
            await self.store.set_overrides(download.id, {"upgrade": str(choice)})
            download = await self.serial.change(download.id, State.APPLYING, reason=f"upgrade: {choice}",
                                                actor=Actor.HUMAN, expected=State.REVIEW)
            self.worker.start_stage(download, mode="human")
        return download

    async def refine(self, download_id: object, *, hint: object) -> Download:
        """review → recognizing with one more hint (kept for every later recognition)."""
        download = await self._load(download_id)
        text = clean_required(hint, limit=MAX_HINT_CHARS, what="the hint")
        async with self._locked(download, "refine") as download:
            await self.store.add_hint(download.id, text)
            download = await self.serial.change(download.id, State.RECOGNIZING, reason="refine: hint added",
                                                actor=Actor.HUMAN, expected=State.REVIEW)
            self.worker.start_stage(download)
        return download

    async def reject(self, download_id: object, *, reason: object = None) -> Download:
        """review → cancelled: nothing is laid out."""
        download = await self._load(download_id)
        why = clean_optional(reason, limit=MAX_REASON_CHARS, what="the reason")
        async with self._locked(download, "reject") as download:
            return await self.serial.change(download.id, State.CANCELLED,
                                            reason=f"reject: {why}" if why else "reject",
                                            actor=Actor.HUMAN, expected=State.REVIEW)

    async def defer(self, download_id: object, *, until: object = None, hours: object = None) -> Download:
        """Stay in review, without notifications until a time (`until` RFC 3339, or `hours` from now)."""
        download = await self._load(download_id)
        if (until is None) == (hours is None):
            raise InvalidArgument("give exactly one of 'until' or 'hours'")
        if hours is not None:
            if isinstance(hours, bool) or not isinstance(hours, int | float) or not 0 < hours <= 24 * 365:
                raise InvalidArgument("'hours' must be a number above 0 and at most 8760")
            moment = clock.utcnow() + timedelta(hours=float(hours))
        else:
            moment = parse_until(until)
        async with self._locked(download, "defer") as download:
            download = await self.store.update_download(download.id, defer_until=clock.format_time(moment))
        self.bus.publish(Event(EventKind.DOWNLOAD_UPDATED, download.id, name=download.display_name,
                               to_state=download.state, actor=Actor.HUMAN,
                               data={"defer_until": download.defer_until}))
        return download

    # ------------------------------------------------------------ after layout

    async def undo(self, download_id: object) -> UndoOutcome:
        """Remove the download's surplus links; → reverted only when the layouter says complete."""
        download = await self._load(download_id)
        async with self._locked(download, "undo") as download:
            result = await self.layouter.undo(download)
            if result.complete:
                download = await self.serial.change(
                    download.id, State.REVERTED, reason=_undo_reason(len(result.removed)),
                    actor=Actor.HUMAN, expected=download.state,
                )
        return UndoOutcome(download, tuple(result.removed), tuple(result.refused), result.complete)

    async def relink(self, download_id: object) -> Download:
        """target_missing → applying → done: lay the vanished library files again."""
        download = await self._load(download_id)
        async with self._locked(download, "relink") as download:
            download = await self.serial.change(download.id, State.APPLYING, reason="relink",
                                                actor=Actor.HUMAN, expected=State.TARGET_MISSING,
                                                reactivate=True)
            self.worker.start_stage(download, mode="relink")
        return download

    async def retry(self, download_id: object) -> Download:
        """failed / cancelled / reverted → the stage where it stopped (Conflict if a hash is taken)."""
        download = await self._load(download_id)
        async with self._locked(download, "retry") as download:
            history = await self.store.transitions(download.id)
            into = [t for t in history if t.to_state is download.state]
            target = retry_target(download.state, into[-1].from_state if into else None,
                                  download.awaiting_files)
            # The guard runs inside the same transaction as the change: nothing happens on Conflict.
            download = await self.serial.change(
                download.id, target, reason="retry", actor=Actor.HUMAN, expected=download.state,
                reactivate=True, fields={"error_code": None, "error_msg": None, "source_miss_count": 0,
                                         "retried_at": clock.now(), "awaiting_files": False},
            )
            self.worker.start_stage(download)
        return download

    async def cancel(self, download_id: object, *, delete_data: bool = False,
                     confirm: bool = False) -> Download:
        """Any active state → cancelled; the torrent and its data go only with delete_data AND confirm."""
        download = await self._load(download_id)
        async with self._locked(download, "cancel") as download:
            if delete_data and not confirm:
                raise ConfirmationRequired("cancel with delete_data removes the torrent and its downloaded "
                                           "files from qBittorrent; send confirm: true to do it")
            reason = "cancel"
            if delete_data:
                torrent = await self.worker.find_torrent(download)
                if torrent is not None:
                    await self.worker.client.delete([torrent.hash], delete_files=True)
                    reason = "cancel: torrent and data removed from qBittorrent"
            return await self.serial.change(download.id, State.CANCELLED, reason=reason, actor=Actor.HUMAN,
                                            expected=download.state)

    async def delete_title(self, provider: object, provider_id: object, *, delete_torrents: bool = False,
                           confirm: bool = False) -> TitleDeleteOutcome:
        """Undo every download of a title (and with confirmation remove their torrents and data)."""
        if provider not in PROVIDERS:
            raise InvalidArgument(f"'provider' must be one of {', '.join(sorted(PROVIDERS))}")
        key = clean_required(provider_id, limit=32, what="'provider_id'")
        if delete_torrents and not confirm:
            raise ConfirmationRequired("delete_title with delete_torrents removes the torrents and their "
                                       "data from qBittorrent; send confirm: true to do it")
        ids = await self.store.title_download_ids(str(provider), key)
        if not ids:
            raise NotFound(f"no laid-out title {provider}:{key}")
        async with AsyncExitStack() as stack:
            for member in sorted(ids):  # one global order: two multi-download commands never deadlock
                await stack.enter_async_context(self.serial.serialized(member))
            members = [await self.store.get_download(member) for member in ids]
            busy = [m for m in members if m.state in ACTIVE_STATES]
            if busy:
                raise InvalidState(f"delete_title is not possible while download {busy[0].id} is in state "
                                   f"{busy[0].state}; cancel it first")
            torrents = {m.id: await self.worker.find_torrent(m) for m in members} if delete_torrents else {}
            result = await self.layouter.delete_title(str(provider), key)  # type: ignore[attr-defined]
            reverted = []
            for member in members:
                if member.id in result.reverted and can_transition(member.state, State.REVERTED):
                    await self.serial.change(member.id, State.REVERTED, reason="delete title",
                                             actor=Actor.HUMAN, expected=member.state)
                    reverted.append(member.id)
            deleted = []
            for member_id in result.torrents:
                torrent = torrents.get(member_id)
                if torrent is not None:
                    await self.worker.client.delete([torrent.hash], delete_files=True)
                    deleted.append(member_id)
        return TitleDeleteOutcome(
            str(provider), key, tuple(reverted), tuple(deleted), tuple(result.removed_folders),
            tuple(result.kept_folders), result.complete,
        )

    # ------------------------------------------------------------ reading

    async def get(self, download_id: object) -> DownloadDetail:
        """One download with its timeline, current recognition, hints, overrides and file links."""
        wanted = ident.parse_id(download_id)
        record = await self.store.download_record(wanted)
        if record is None:
            raise NotFound(f"unknown download id {wanted!r}")
        return record

    async def view(self, download_id: str) -> DownloadView | None:
        """A download and what its retained topics show, in one read (None: unknown id)."""
        return await self.store.download_view(download_id)

    async def list(self, *, states: Iterable[object] | None = None, text: object = None,
                   limit: int = 50, offset: int = 0, after: str | None = None) -> DownloadPage:
        """Downloads newest first, filtered by states and a text search, with the total for paging.

        One trip to the database: the page with each download's recognition headline, and the
        total. `after` (an id) pages by keyset instead of `offset`, for callers walking everything.
        """
        wanted, query = _page_filter(states, text, limit, offset)
        page = await self.store.download_page(states=wanted, text=query, limit=limit, offset=offset,
                                              after=ident.parse_id(after) if after is not None else None)
        return DownloadPage(page.items, page.total, limit, offset, page.headlines)

    async def list_rows(self, *, states: Iterable[object] | None = None, text: object = None,
                        limit: int = 50, offset: int = 0) -> RowPage:
        """`list`'s page as plain rows, for a transport that serializes it without a model per download."""
        wanted, query = _page_filter(states, text, limit, offset)
        return await self.store.download_rows(states=wanted, text=query, limit=limit, offset=offset)

    async def titles(self) -> builtins.list[Any]:
        """The computed title groups (downloads sharing a matched provider id)."""
        return builtins.list(await self.layouter.title_groups())

    def notify(self, infohash: object = None) -> None:
        """qBittorrent finished a torrent (its completion hook): the worker polls now."""
        self.worker.notify(infohash if isinstance(infohash, str) else None)

    async def summary(self, *, waiting: int = 0) -> Summary:
        """Counts per state (every state present), active, in review and the review queue size.

        Also the download laid out last, and the `waiting` reviews that have waited longest (not
        deferred), each with its recognition's headline; all in one read.
        """
        counts = {state.value: 0 for state in State}
        record = await self.store.summary_record(clock.now(), waiting=waiting)
        for state, n in record.counts.items():
            counts[state.value] = n
        queue = record.review_queue
        return Summary(
            states=counts, active=sum(counts[s.value] for s in ACTIVE_STATES),
            downloading=counts[State.DOWNLOADING.value] + record.early, in_review=counts[State.REVIEW.value],
            failed=counts[State.FAILED.value], review_queue=queue, last_done=record.last_done,
            waiting=record.waiting,
        )

    def qbittorrent_reachable(self) -> bool | None:
        """Whether the worker's last poll reached qBittorrent (None = it has not polled yet)."""
        return self.worker.health.reachable

    async def status(self) -> Status:
        """Is qBittorrent reachable (as the worker last saw it), and which versions run."""
        health = self.worker.health
        version = api = None
        if health.reachable:
            try:
                version = await self.worker.client.app_version()
                api = ".".join(str(p) for p in await self.worker.client.api_version())
            except AdapterError:
                pass  # the next poll records it; the status shows the last known health
        qbt = QbittorrentStatus(reachable=health.reachable, since=health.since, error=health.error,
                                torrents=health.torrents, version=version, api_version=api,
                                early_layout=self.worker.early.status())
        return Status(version=__version__, qbittorrent=qbt,
                      reconcile=self.worker.housekeeping.reconciler.progress)


def pin_film(recognition: Recognition, chosen: str, pinned: dict[str, Any],
             stored: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """Movie packs: a candidate chosen for one film pins that film's videos to it, beside the pins
    already stored; returns the overrides and how many unsure films are still undecided."""
    candidate = next(c for c in recognition.candidates if c.id == chosen)
    film = next((f for f in recognition.plan.films if f.key == candidate.details.get("film")), None)
    if film is None:
        return pinned, 0
    files = {**stored, **(pinned.get("files") or {})}
    for source in film.sources:
        files[source] = {**files.get(source, {}), "provider": candidate.provider,
                         "provider_id": candidate.provider_id}
    left = sum(1 for f in recognition.plan.films if not f.confirmed
               and not any((files.get(s) or {}).get("provider_id") for s in f.sources))
    return {**pinned, "files": files}, left
