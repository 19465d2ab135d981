"""What the download page decides to say, as plain data: the verdict, the reasons in order, the human's
per-file corrections as the `apply` overrides the worker takes.

Pure (no NiceGUI), so the rules are tested on their own; the pages only render them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jellybit.protocol import (
    LANGUAGE_PATTERN,
    MAX_SEASON,
    OVERRIDE_ROLES,
    CandidatePayload,
    DownloadPayload,
    PlanItemPayload,
    ReasonPayload,
    RecognitionDetail,
    Role,
    State,
    TransitionRow,
)
from ui import format as fmt

LANGUAGE = re.compile(LANGUAGE_PATTERN)
ROLES = OVERRIDE_ROLES
TRACKS = (Role.SUBTITLE, Role.AUDIO)


@dataclass(frozen=True)
class Verdict:
    """The one line at the top of the recognition: `tone` is decide | done | working | problem | stopped."""

    tone: str
    headline: str
    detail: str = ""


def ordered_reasons(reasons: Iterable[ReasonPayload]) -> list[ReasonPayload]:
    """Blocking reasons first, then the weightiest; notes after them."""
    return sorted(reasons, key=lambda r: (not r.blocking, -r.weight))


def reason_words(reason: ReasonPayload) -> tuple[str, str]:
    """(the reason's own sentence, what its kind means in general — '' when it says the same)."""
    message = fmt.sentence(reason.message)
    meaning = fmt.sentence(reason.meaning or "")
    if not message:
        return meaning or reason.code.replace("_", " "), ""
    return message, meaning if meaning and meaning.casefold() not in message.casefold() else ""


def _applied_by_human(timeline: Iterable[TransitionRow]) -> bool:
    last = next((t for t in reversed(list(timeline)) if t.to is State.APPLYING), None)
    return bool(last and last.actor == "human")


def _downloading(download: DownloadPayload) -> str:
    """Asked or decided while the files download: how far, and what a decision does (else "")."""
    if not download.awaiting_files:
        return ""
    return (f" Still downloading, {round(download.progress * 100)}%: a decision is applied when the files "
            "arrive.")


def verdict(download: DownloadPayload, recognition: RecognitionDetail | None,
            timeline: Iterable[TransitionRow] = ()) -> Verdict:
    """What happened or what is needed, in one line that never contradicts the state."""
    state = download.state
    title = fmt.title_line((recognition.title if recognition else None) or download.title,
                           (recognition.year if recognition else None) or download.year)
    if state is State.REVIEW:
        blocking = [r for r in ordered_reasons(recognition.reasons if recognition else []) if r.blocking]
        # The kind of doubt in general; the reasons below say it for this download.
        first = reason_words(blocking[0]) if blocking else ("Nothing confirmed what this is.", "")
        why = first[1] or first[0]
        more = f" (and {fmt.count(len(blocking) - 1, 'more reason')})" if len(blocking) > 1 else ""
        return Verdict("decide", "Needs your decision", why + more + _downloading(download))
    if state is State.APPLYING and download.awaiting_files:
        who = "as you decided" if _applied_by_human(timeline) else "automatically"
        return Verdict("working", f"Decided {who}", (f"{title}. " if title else "")
                       + _downloading(download).strip())
    if state in (State.DONE, State.APPLYING):
        verb = "Laid out" if state is State.DONE else "Laying out"
        if _applied_by_human(timeline):
            return Verdict("done", f"{verb} as you decided", title)
        return Verdict("done", f"{verb} automatically", f"{title}: a confirmed match, nothing in doubt"
                       if title else "A confirmed match, nothing in doubt")
    if state is State.RECOGNIZING:
        return Verdict("working", "Recognizing…", "Reading the names, asking the metadata providers.")
    if state in (State.QUEUED, State.DOWNLOADING):
        return Verdict("working", "Downloading", "Recognition runs as soon as qBittorrent lists the files.")
    error = download.error
    if state is State.FAILED:
        return Verdict("problem", "Failed", (error.message or error.code) if error else "")
    problems = {State.TARGET_MISSING: "The library files are gone; the download is still there (Relink).",
                State.ORPHANED: "The torrent is gone from qBittorrent; the library files remain.",
                State.DELETED: "Both the torrent and the library files are gone."}
    if state in problems:
        return Verdict("problem", fmt.state_label(state), problems[state])
    words = {State.CANCELLED: "Nothing was laid out.", State.REVERTED: "Its library files were removed."}
    return Verdict("stopped", fmt.state_label(state), words.get(state, ""))


def preselected(recognition: RecognitionDetail | None) -> str | None:
    """The candidate shown as chosen when the page opens: the recommended one, else the chosen."""
    candidates = recognition.candidates if recognition else []
    wanted = recognition.recommended if recognition else None
    for item in candidates:
        if wanted and item.id == wanted:
            return candidate_key(item)
    chosen = next((c for c in candidates if c.chosen), None)
    return candidate_key(chosen) if chosen else None


def candidate_key(item: CandidatePayload) -> str:
    """A stable key for a candidate: its id, else provider:provider_id."""
    return item.id or f"{item.provider}:{item.provider_id}"


def file_overrides(rows: Iterable[PlanItemPayload], edits: Mapping[str, Mapping[str, Any]]
                   ) -> dict[str, dict[str, Any]] | str:
    """The per-file `overrides.files` from the table's edits, or a sentence saying what is wrong.

    Only what the human changed is pinned; a row left as recognized pins nothing.
    """
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        source = row.source
        edit = edits.get(source)
        if not edit:
            continue
        pinned: dict[str, Any] = {}
        name = source.rsplit("/", 1)[-1]
        role = edit.get("role", row.role)
        if role != row.role:
            if role not in ROLES:
                return f"{name}: choose a role"
            pinned["role"] = str(role)
        season = edit.get("season", row.season)
        if season != row.season and season not in (None, ""):
            if not isinstance(season, int | float) or not 0 <= int(season) <= MAX_SEASON:
                return f"{name}: the season is a number from 0 to {MAX_SEASON}"
            pinned["season"] = int(season)
        text = edit.get("episodes")
        if text is not None and text != fmt.episodes_text(row.episodes):
            episodes = fmt.parse_episodes(str(text))
            if episodes is None:
                return f"{name}: episodes are numbers like 3, 3-4 or 1, 2"
            pinned["episodes"] = episodes
            pinned.setdefault("season", int(season) if isinstance(season, int | float) else row.season)
        language = (edit.get("language") or "").strip()
        if language and language != (row.language or ""):
            if role not in TRACKS:
                return f"{name}: only subtitle and audio files have a language"
            if not LANGUAGE.match(language):
                return f"{name}: the language is a code like en, rus or pt-BR"
            pinned["language"] = language
        if pinned.get("season") is None:
            pinned.pop("season", None)
        if pinned:
            found[source] = pinned
    return found
