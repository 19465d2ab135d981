"""The stages after the download: recognize → preview → decide → lay out, through the ports.

`recognizing`: the file list comes from qBittorrent, the recognizer runs outside the download's
lock, its draft is previewed by the layouter and stored as the current recognition; an
automatic one (strong, confirmed match, no blocking reason, none from the preview either:
informational notes such as `folder_inherited` never block) goes on to `applying`, anything
else to `review` with its reasons. A review caused by a metadata outage (`provider_unavailable`)
is scheduled to be recognized again by itself (`retries.py`). `applying` after a human's **apply**
recognizes again without the LLM (the chosen candidate and the overrides win) and lays out
even when not automatic; any other `applying` (automatic, retry, relink, recovery) lays out the
current recognition. A collision sends the download back to review; an I/O error fails it.

Recognized early (`awaiting_files`: qBittorrent has the file list, not yet the bytes): the plan
covers every wanted file, no byte of a pending one is read, a missing source is no reason yet, and
the recognition carries the `files_pending` note. A decision taken then (automatic, or a human's
apply, which is recognized again and stored) waits in `applying`. Once the files are complete the
apply stage recognizes again without the LLM, with the decision's candidate and the overrides,
reading the bytes; when that changes the decision (core/arrival.py) the download goes to review
with `content_changed`, else it is laid out without asking again.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from jellybit.core import arrival
from jellybit.core.models import Download, Transition
from jellybit.core.ports import (
    Layouter,
    LayoutPreview,
    RecognitionRequest,
    Recognizer,
    TorrentClient,
)
from jellybit.core.reasons import blocking, in_words, reason
from jellybit.core.records import Plan, PlanItem, Reason, Recognition, RecognitionDraft, Role, SourceFile
from jellybit.core.states import Actor, State
from jellybit.core.storage import LIBRARY_CODES
from jellybit.core.store_port import StorePort
from jellybit.engine.retries import RETRY_CODE, OutageRetries
from jellybit.engine.serial import Serializer
from jellybit.errors import AdapterError, JellybitError, StorageFault
from jellybit.logs import for_download

log = logging.getLogger(__name__)

RECOGNIZE = "recognize"
APPLY = "apply"
APPLY_MODES = frozenset({"plain", "human", "relink"})


def merge_reasons(*groups: tuple[Reason, ...]) -> tuple[Reason, ...]:
    """Concatenate reason tuples, keeping the first reason of each code."""
    seen: set[str] = set()
    merged: list[Reason] = []
    for group in groups:
        for found in group:
            if found.code not in seen:
                seen.add(found.code)
                merged.append(found)
    return tuple(merged)


def review_reason(reasons: tuple[Reason, ...]) -> str:
    """The one-line transition reason for a download sent to review."""
    if not reasons:
        return "needs a human decision"
    return "needs review: " + in_words(reasons)


class Pipeline:
    """Runs the recognition and layout stages of downloads as serialized background tasks."""

    def __init__(self, store: StorePort, serial: Serializer, client: TorrentClient,
                 recognizer: Recognizer, layouter: Layouter, retries: OutageRetries | None = None) -> None:
        self.store = store
        self.serial = serial
        self.client = client
        self.recognizer = recognizer
        self.layouter = layouter
        self.retries = retries or OutageRetries(60.0, 3600.0)

    # ------------------------------------------------------------ starting stages

    def start_recognition(self, download_id: str, torrent_hash: str) -> bool:
        """Recognize a download in `recognizing` whose torrent has this qBittorrent id."""
        return self.serial.spawn(download_id, RECOGNIZE,
                                 lambda: self._recognition_stage(download_id, torrent_hash))

    def start_apply(self, download_id: str, *, mode: str = "plain", torrent_hash: str | None = None) -> bool:
        """Lay out a download in `applying`.

        `mode`: "human" (after **apply**: recognize again without the LLM first), "relink"
        (after **relink**: the layouter forgets vanished targets first) or "plain". `torrent_hash`
        (qBittorrent's id of its torrent, when known) lets a decision taken while the files
        downloaded be checked against the files qBittorrent lists as complete and wanted.
        """
        if mode not in APPLY_MODES:
            raise ValueError(f"unknown apply mode {mode!r}")
        return self.serial.spawn(download_id, APPLY,
                                 lambda: self._apply_stage(download_id, mode, torrent_hash))

    async def resume_apply(self, download_id: str, torrent_hash: str | None = None) -> bool:
        """Start the apply stage of a download in `applying` in the mode its last transition says."""
        history = await self.store.transitions(download_id)
        last = history[-1] if history else None
        mode = "plain"
        if last is not None and last.to_state is State.APPLYING:
            if last.from_state is State.REVIEW:
                mode = "human"
            elif last.from_state is State.TARGET_MISSING:
                mode = "relink"
        return self.start_apply(download_id, mode=mode, torrent_hash=torrent_hash)

    # ------------------------------------------------------------ recognizing

    async def _recognition_stage(self, download_id: str, torrent_hash: str) -> None:
        async with self.serial.serialized(download_id):
            download = await self.store.find_download(download_id)
            if download is None or download.state is not State.RECOGNIZING:
                return
            epoch = self.serial.epoch(download_id)
            request = await self._request(download, files=())
        async with self.serial.external(download_id):
            try:
                files = await self.client.files(torrent_hash)
            except AdapterError as exc:
                log.warning("cannot list the torrent's files yet: %s", exc.message,
                            **for_download(download_id))
                return  # the next poll starts the stage again
            # Files left at priority 0 never complete and are not on disk: not part of the plan.
            early = request.download.awaiting_files
            wanted = [f for f in files if f.progress >= 1 or (early and f.priority > 0)]
            sources = tuple(SourceFile(f.name, f.size) for f in wanted)
            pending = frozenset(f.name for f in wanted if f.progress < 1)
            draft = await self._recognize(replace(request, files=sources, pending=pending))
        async with self.serial.serialized(download_id):
            current = await self.store.find_download(download_id)
            if (current is None or current.state is not State.RECOGNIZING
                    or self.serial.epoch(download_id) != epoch):
                log.info("recognition result discarded: the download changed meanwhile",
                         **for_download(download_id))
                return
            await self._decide(current, draft, human=False, pending=pending)

    async def _request(self, download: Download, files: tuple[SourceFile, ...]) -> RecognitionRequest:
        previous = await self.store.current_recognition(download.id)
        hints = tuple(h.text for h in await self.store.hints(download.id))
        overrides = await self.store.overrides(download.id)
        return RecognitionRequest(download=download, files=files, hints=hints, overrides=overrides,
                                  previous=previous)

    async def _recognize(self, request: RecognitionRequest) -> RecognitionDraft:
        """Run the recognizer; a crash becomes a draft that asks a human (never a failure)."""
        download_id = request.download.id
        if not request.files:
            return RecognitionDraft(None, None, None, plan=_empty_plan(request), reasons=(
                reason("no_files", "qBittorrent lists no complete file for this torrent"),))
        try:
            return await self.recognizer.recognize(request)
        except Exception as exc:
            log.exception("recognizer failed", **for_download(download_id))
            message = exc.message if isinstance(exc, JellybitError) else f"{type(exc).__name__}: {exc}"
            previous = request.previous
            return RecognitionDraft(
                previous.media_type if previous else None, previous.title if previous else None,
                previous.year if previous else None, plan=_empty_plan(request),
                reasons=(reason("recognizer_error", f"recognition failed: {message}"),),
            )

    async def _preview(self, download: Download, draft: RecognitionDraft) -> tuple[LayoutPreview, bool]:
        """The layouter's preview; (preview, ok) where not ok means it could not compute targets."""
        try:
            return await self.layouter.preview(download, draft), True
        except Exception as exc:
            if not isinstance(exc, JellybitError | OSError):
                log.exception("layout preview failed", **for_download(download.id))
            message = exc.message if isinstance(exc, JellybitError) else str(exc)
            found = reason("layout_preview", f"cannot compute the targets: {message}")
            return LayoutPreview(plan=draft.plan, reasons=(found,)), False

    async def _decide(self, download: Download, draft: RecognitionDraft, *, human: bool,
                      pending: frozenset[str] = frozenset()) -> None:
        """Store the previewed recognition, then lay out or ask a human (lock held).

        With files `pending` (still downloading) a decision is stored and waits in `applying`.
        """
        preview, ok = await self._preview(download, draft)
        found = preview.reasons
        if pending:
            # Not on disk yet (or not under its final name): checked once the files complete.
            found = tuple(r for r in found if r.code != "source_missing")
            found += (reason(arrival.PENDING_CODE, f"{len(pending)} of {len(draft.plan.items)} files are "
                             f"still downloading ({download.progress:.0%}): their content is checked "
                             "when they complete"),)
        reasons = merge_reasons(draft.reasons, found)
        stored = await self.store.save_recognition(
            download.id, replace(_as_draft(draft), plan=preview.plan, reasons=reasons)
        )
        if human:
            if not ok:
                await self.serial.change(download.id, State.REVIEW, reason=review_reason(preview.reasons),
                                         actor=Actor.WORKER, expected=State.APPLYING)
                return
            if not pending:
                await self._lay_out(download, stored)
            else:
                log.info("apply kept: laid out once the files are complete", **for_download(download.id))
            return
        if any(r.code == RETRY_CODE for r in reasons):
            delay = self.retries.schedule(download.id)
            log.info("a metadata provider was unreachable; recognizing again in %.0f s", delay,
                     **for_download(download.id))
        else:
            self.retries.clear(download.id)
        if draft.automatic and not blocking(found):
            waits = f"; laid out once the files are complete ({download.progress:.0%})" if pending else ""
            download = await self.serial.change(
                download.id, State.APPLYING, actor=Actor.WORKER, expected=State.RECOGNIZING,
                reason=f"automatic: {stored.provider} {stored.provider_id}{waits}",
            )
            if not pending:
                await self._lay_out(download, stored)
        else:
            await self.serial.change(download.id, State.REVIEW, reason=review_reason(reasons),
                                     actor=Actor.WORKER, expected=State.RECOGNIZING)

    # ------------------------------------------------------------ applying

    async def _apply_stage(self, download_id: str, mode: str, torrent_hash: str | None = None) -> None:
        baseline: Recognition | None = None
        async with self.serial.serialized(download_id):
            download = await self.store.find_download(download_id)
            if download is None or download.state is not State.APPLYING:
                return
            recognition = await self.store.current_recognition(download_id)
            if mode != "relink" and recognition is not None:
                baseline = await self._decided_early(download_id, recognition)
            if mode != "human" and baseline is None:
                if download.awaiting_files and mode != "relink":
                    return          # decided while downloading: laid out once the files are complete
                if recognition is None:
                    await self.serial.change(download_id, State.REVIEW, reason="nothing recognized to apply",
                                             actor=Actor.WORKER, expected=State.APPLYING)
                    return
                await self._lay_out(download, recognition, relink=mode == "relink")
                return
            if download.awaiting_files and baseline is not None:
                return              # the human's decision is stored; it waits for the files
            epoch = self.serial.epoch(download_id)
            request = await self._request(download, files=())
            previous = request.previous
            files = tuple(SourceFile(i.source, i.size) for i in previous.plan.items) if previous else ()
            chosen = next((c for c in previous.candidates if c.chosen), None) if previous else None
            if previous is not None and previous.plan.films:
                chosen = None         # a movie pack's films are pinned one by one, in the overrides
            pending = frozenset(f.path for f in files) if download.awaiting_files else frozenset()
            request = replace(request, files=files, chosen=chosen, use_llm=False, pending=pending)
        async with self.serial.external(download_id):
            if baseline is not None and torrent_hash is not None:
                try:
                    listed = await self.client.files(torrent_hash)
                except AdapterError as exc:
                    log.warning("cannot list the torrent's files yet: %s", exc.message,
                                **for_download(download_id))
                    return  # the next poll starts the stage again
                # A file deselected since the decision is no longer part of the download.
                complete = {f.name for f in listed if f.priority > 0 and f.progress >= 1}
                request = replace(request, files=tuple(f for f in request.files if f.path in complete))
            draft = await self._recognize(request)
        async with self.serial.serialized(download_id):
            current = await self.store.find_download(download_id)
            if (current is None or current.state is not State.APPLYING
                    or self.serial.epoch(download_id) != epoch):
                log.info("apply discarded: the download changed meanwhile", **for_download(download_id))
                return
            if baseline is not None:
                await self._arrived(current, draft, baseline)
            else:
                await self._decide(current, draft, human=True, pending=pending)

    async def _decided_early(self, download_id: str, recognition: Recognition) -> Recognition | None:
        """The decision taken while the files downloaded, to check the completed files against.

        An automatic one is the recognition that entered `applying`; after a human's apply, only one
        recognized again after the apply (it holds the chosen candidate and the overrides).
        """
        if not arrival.recognized_early(recognition):
            return None
        history = await self.store.transitions(download_id)
        entered = _last_into(history, State.APPLYING)
        human = entered is not None and entered.from_state is State.REVIEW
        return None if human and recognition.created_at <= entered.created_at else recognition

    async def _arrived(self, download: Download, draft: RecognitionDraft, baseline: Recognition) -> None:
        """The files are complete: lay out the decision, or ask again when their content changed it."""
        preview, ok = await self._preview(download, draft)
        reasons = merge_reasons(draft.reasons, preview.reasons)
        checked = replace(_as_draft(draft), plan=preview.plan, reasons=reasons)
        changes = arrival.decision_changes(baseline, checked)
        if not ok and not changes:
            changes = [r.message for r in preview.reasons]
        if changes:
            said = arrival.in_words(changes)
            found = reason(arrival.CHANGED_CODE, f"after the files completed: {said}")
            checked = replace(checked, reasons=merge_reasons((found,), reasons))
        stored = await self.store.save_recognition(download.id, checked)
        if changes:
            log.info("the completed files changed the decision: %s", "; ".join(changes),
                     **for_download(download.id))
            await self.serial.change(download.id, State.REVIEW, actor=Actor.WORKER, expected=State.APPLYING,
                                     reason=f"needs review: the completed files changed the decision: "
                                            f"{arrival.in_words(changes)}"[:500])
            return
        await self._lay_out(download, stored)

    async def _lay_out(self, download: Download, recognition: Recognition, *, relink: bool = False) -> None:
        """Apply the plan and settle the outcome (lock held, state `applying`)."""
        try:
            if relink:
                result = await self.layouter.relink(download, recognition)
            else:
                result = await self.layouter.apply(download, recognition)
        except Exception as exc:
            if isinstance(exc, StorageFault) and exc.code in LIBRARY_CODES:
                await self._library_fault(download, recognition, exc)
                return
            if isinstance(exc, JellybitError) and exc.transient:
                # The database was held by another process: nothing is lost (the journal makes a
                # re-apply idempotent), so stay `applying`; the next poll cycle applies again.
                log.warning("layout paused; it is tried again: %s", exc.message, **for_download(download.id))
                return
            if not isinstance(exc, JellybitError | OSError):
                log.exception("layout crashed", **for_download(download.id))
            message = exc.message if isinstance(exc, JellybitError) else f"{type(exc).__name__}: {exc}"
            await self._fail_layout(download.id, message)
            return
        if result.outcome == "done":
            summary = (f"laid out: {result.linked} linked, {result.copied} copied, "
                       f"{result.existing} already there, {result.skipped} skipped")
            await self.serial.change(download.id, State.DONE, reason=summary, actor=Actor.WORKER,
                                     expected=State.APPLYING, fields={"error_code": None, "error_msg": None})
        elif result.outcome == "collision":
            shown = ", ".join(result.collisions[:3]) + (" …" if len(result.collisions) > 3 else "")
            await self._explain_collision(download, recognition)
            await self.serial.change(download.id, State.REVIEW,
                                     reason=f"collision: {shown or result.message}",
                                     actor=Actor.WORKER, expected=State.APPLYING)
        else:
            await self._fail_layout(download.id, result.message or f"layout outcome {result.outcome!r}")

    async def _explain_collision(self, download: Download, recognition: Recognition) -> None:
        """Store the recognition again with the plan as it stands now, so the review shows the collision."""
        # A collision found only at layout time (retry, relink, a file that appeared meanwhile) would
        # otherwise leave the review with the old plan: every file "planned" and no reason at all.
        preview, ok = await self._preview(download, recognition)
        if not ok:
            return
        reasons = merge_reasons(preview.reasons, recognition.reasons)
        await self.store.save_recognition(download.id, replace(_as_draft(recognition), plan=preview.plan,
                                                                reasons=reasons))

    async def _library_fault(self, download: Download, recognition: Recognition, fault: StorageFault) -> None:
        """A full, read-only or unmounted library: review with that reason (Apply lays it out once fixed)."""
        found = reason(fault.code, fault.message)
        reasons = merge_reasons((found,), recognition.reasons)
        await self.store.save_recognition(download.id, replace(_as_draft(recognition), reasons=reasons))
        log.info("layout paused: %s", fault.message, **for_download(download.id))
        await self.serial.change(download.id, State.REVIEW, reason=f"needs review: {fault.message}",
                                 actor=Actor.WORKER, expected=State.APPLYING)

    async def _fail_layout(self, download_id: str, message: str) -> None:
        await self.serial.change(download_id, State.FAILED, reason=f"layout_io: {message}",
                                 actor=Actor.WORKER, expected=State.APPLYING,
                                 fields={"error_code": "layout_io", "error_msg": message[:2000]})


def _last_into(history: list[Transition] | tuple[Transition, ...], state: State) -> Transition | None:
    return next((t for t in reversed(history) if t.to_state is state), None)


def _empty_plan(request: RecognitionRequest) -> Plan:
    """Every file as ignored: the plan a human starts from when recognition could not run."""
    return Plan(items=tuple(PlanItem(f.path, f.size, Role.IGNORED) for f in request.files))


def _as_draft(draft: RecognitionDraft) -> RecognitionDraft:
    """A plain draft (a recognizer may hand back a stored Recognition)."""
    if type(draft) is RecognitionDraft:
        return draft
    return RecognitionDraft(
        media_type=draft.media_type, title=draft.title, year=draft.year, plan=draft.plan,
        original_title=draft.original_title, provider=draft.provider, provider_id=draft.provider_id,
        confidence=draft.confidence, recommendation=draft.recommendation, reasons=draft.reasons,
        raw_llm=draft.raw_llm, candidates=draft.candidates,
    )
