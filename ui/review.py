"""What the download page decides to say, as plain data: the verdict, the reasons in order, the human's
per-file corrections as the `apply` overrides the worker takes.

Pure (no NiceGUI), so the rules are tested on their own; the pages only render them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ui import format as fmt

LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-([A-Za-z]{2}|[A-Za-z]{4}|[0-9]{3}))?$")
ROLES = ("video", "subtitle", "audio", "extra", "ignored")
TRACKS = ("subtitle", "audio")


@dataclass(frozen=True)
class Verdict:
    """The one line at the top of the recognition: `tone` is decide | done | working | problem | stopped."""

    tone: str
    headline: str
    detail: str = ""


def ordered_reasons(reasons: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Blocking reasons first, then the weightiest; notes after them."""
    return sorted(reasons, key=lambda r: (not r.get("blocking"), -float(r.get("weight") or 0.0)))


def reason_words(reason: Mapping[str, Any]) -> tuple[str, str]:
    """(the reason's own sentence, what its kind means in general — '' when it says the same)."""
    message = fmt.sentence(str(reason.get("message") or ""))
    meaning = fmt.sentence(str(reason.get("meaning") or ""))
    if not message:
        return meaning or str(reason.get("code") or "").replace("_", " "), ""
    return message, meaning if meaning and meaning.casefold() not in message.casefold() else ""


def _applied_by_human(timeline: Iterable[Mapping[str, Any]]) -> bool:
    last = next((t for t in reversed(list(timeline)) if t.get("to") == "applying"), None)
    return bool(last and last.get("actor") == "human")


def verdict(download: Mapping[str, Any], recognition: Mapping[str, Any] | None,
            timeline: Iterable[Mapping[str, Any]] = ()) -> Verdict:
    """What happened or what is needed, in one line that never contradicts the state."""
    state = str(download.get("state") or "")
    title = fmt.title_line((recognition or {}).get("title") or download.get("title"),
                           (recognition or {}).get("year") or download.get("year"))
    if state == "review":
        blocking = [r for r in ordered_reasons((recognition or {}).get("reasons") or []) if r.get("blocking")]
        # The kind of doubt in general; the reasons below say it for this download.
        first = reason_words(blocking[0]) if blocking else ("Nothing confirmed what this is.", "")
        why = first[1] or first[0]
        more = f" (and {fmt.count(len(blocking) - 1, 'more reason')})" if len(blocking) > 1 else ""
        return Verdict("decide", "Needs your decision", why + more)
    if state in ("done", "applying"):
        verb = "Laid out" if state == "done" else "Laying out"
        if _applied_by_human(timeline):
            return Verdict("done", f"{verb} as you decided", title)
        return Verdict("done", f"{verb} automatically", f"{title}: a confirmed match, nothing in doubt"
                       if title else "A confirmed match, nothing in doubt")
    if state == "recognizing":
        return Verdict("working", "Recognizing…", "Reading the names, asking the metadata providers.")
    if state in ("queued", "downloading"):
        return Verdict("working", "Downloading", "Recognition runs once the download is complete.")
    error = download.get("error") or {}
    if state == "failed":
        return Verdict("problem", "Failed", str(error.get("message") or error.get("code") or ""))
    problems = {"target_missing": "The library files are gone; the download is still there (Relink).",
                "orphaned": "The torrent is gone from qBittorrent; the library files remain.",
                "deleted": "Both the torrent and the library files are gone."}
    if state in problems:
        return Verdict("problem", fmt.state_label(state), problems[state])
    words = {"cancelled": "Nothing was laid out.", "reverted": "Its library files were removed."}
    return Verdict("stopped", fmt.state_label(state), words.get(state, ""))


def preselected(recognition: Mapping[str, Any] | None) -> str | None:
    """The candidate shown as chosen when the page opens: the recommended one, else the chosen."""
    candidates = (recognition or {}).get("candidates") or []
    wanted = (recognition or {}).get("recommended")
    for item in candidates:
        if wanted and item.get("id") == wanted:
            return candidate_key(item)
    chosen = next((c for c in candidates if c.get("chosen")), None)
    return candidate_key(chosen) if chosen else None


def candidate_key(item: Mapping[str, Any]) -> str:
    """A stable key for a candidate: its id, else provider:provider_id."""
    return str(item.get("id") or f"{item.get('provider')}:{item.get('provider_id')}")


def file_overrides(rows: Iterable[Mapping[str, Any]], edits: Mapping[str, Mapping[str, Any]]
                   ) -> dict[str, dict[str, Any]] | str:
    """The per-file `overrides.files` from the table's edits, or a sentence saying what is wrong.

    Only what the human changed is pinned; a row left as recognized pins nothing.
    """
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        source = str(row.get("source") or "")
        edit = edits.get(source)
        if not edit:
            continue
        pinned: dict[str, Any] = {}
        name = source.rsplit("/", 1)[-1]
        role = edit.get("role", row.get("role"))
        if role != row.get("role"):
            if role not in ROLES:
                return f"{name}: choose a role"
            pinned["role"] = role
        season = edit.get("season", row.get("season"))
        if season != row.get("season") and season not in (None, ""):
            if not isinstance(season, int | float) or not 0 <= int(season) <= 1000:
                return f"{name}: the season is a number from 0 to 1000"
            pinned["season"] = int(season)
        text = edit.get("episodes")
        if text is not None and text != fmt.episodes_text(row.get("episodes") or []):
            episodes = fmt.parse_episodes(str(text))
            if episodes is None:
                return f"{name}: episodes are numbers like 3, 3-4 or 1, 2"
            pinned["episodes"] = episodes
            pinned.setdefault("season", int(season) if isinstance(season, int | float) else row.get("season"))
        language = (edit.get("language") or "").strip()
        if language and language != (row.get("language") or ""):
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
