"""What the download page decides to say, as plain data: the preselected candidate and the human's
per-file corrections as the `apply` overrides the worker takes. The verdict and the reasons in order
are every face's (`jellybit.present`), re-exported here for the pages.

Pure (no NiceGUI), so the rules are tested on their own; the pages only render them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from jellybit.present import Verdict, ordered_reasons, reason_words, verdict
from jellybit.protocol import (
    LANGUAGE_PATTERN,
    MAX_SEASON,
    OVERRIDE_ROLES,
    CandidatePayload,
    PlanItemPayload,
    RecognitionDetail,
    Role,
)
from ui import format as fmt

LANGUAGE = re.compile(LANGUAGE_PATTERN)
ROLES = OVERRIDE_ROLES
TRACKS = (Role.SUBTITLE, Role.AUDIO)
__all__ = ["Verdict", "candidate_key", "file_overrides", "ordered_reasons", "preselected", "reason_words",
           "verdict"]


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
