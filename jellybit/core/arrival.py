"""What the completed files changed about a decision taken while they downloaded (issue 25).

A download is recognized as soon as qBittorrent lists its files; a decision (automatic, or a
human's apply) may be taken before any byte is there. When the files complete, the recognition
runs again with their content (a subtitle's text) and the layout checks the disk; this module
says whether that changed the *decision*: the work, a file's role or numbering, a file gone from
the download, or a new blocking reason. What the bytes only fill in (a subtitle's language the
name did not tell, its forced/SDH flags) is no change: it is applied without asking again.
"""

from __future__ import annotations

from collections.abc import Sequence

from jellybit.core.names import source_ext
from jellybit.core.reasons import is_blocking
from jellybit.core.records import PlanItem, Reason, RecognitionDraft, Role
from jellybit.core.subtitle_text import TEXT_EXTENSIONS

PENDING_CODE = "files_pending"
CHANGED_CODE = "content_changed"
LISTED = 4                   # changes named in the reason; the rest are counted
_LAID = frozenset({Role.VIDEO, Role.SUBTITLE, Role.AUDIO, Role.EXTRA})
_OWN = frozenset({PENDING_CODE, CHANGED_CODE})


def recognized_early(recognition: RecognitionDraft | None) -> bool:
    """Tell whether a recognition was made while some of its files were still downloading."""
    return recognition is not None and any(r.code == PENDING_CODE for r in recognition.reasons)


def waits_for_bytes(item: PlanItem) -> bool:
    """A planned file whose target its content may still change: a subtitle whose text tells its language.

    It is laid out only with the completed files' recognition, never early under a name without it.
    """
    return (item.role is Role.SUBTITLE and item.language is None and item.attached_to is not None
            and source_ext(item.source) in TEXT_EXTENSIONS)


def _numbering(item: PlanItem) -> str:
    if item.role is Role.VIDEO and item.work is not None:
        return f"{item.work.title} ({item.work.year})" if item.work.year else item.work.title
    if item.episodes:
        season = f"S{item.season:02d}" if item.season is not None else ""
        return season + "-".join(f"E{e:02d}" for e in item.episodes)
    if item.part is not None:
        return f"part {item.part}"
    return item.role.value


def _key(item: PlanItem) -> tuple[object, ...]:
    work = (item.work.provider, item.work.provider_id, item.work.title) if item.work is not None else None
    return (item.role, item.season, item.episodes, item.part, item.attached_to, work)


def _work(draft: RecognitionDraft) -> str:
    named = f"'{draft.title}'" + (f" ({draft.year})" if draft.year else "")
    return f"{named} [{draft.provider} {draft.provider_id}]" if draft.provider else named


def decision_changes(before: RecognitionDraft, after: RecognitionDraft) -> list[str]:
    """How `after` (recognized with the completed files) differs in decision from `before`, in words."""
    found: list[str] = []
    if (before.media_type, before.provider, before.provider_id) != (after.media_type, after.provider,
                                                                    after.provider_id):
        found.append(f"it now reads as {_work(after)}, not {_work(before)}")
    now = {item.source: item for item in after.plan.items}
    for item in before.plan.items:
        if item.role not in _LAID:
            continue
        later = now.get(item.source)
        if later is None:
            found.append(f"'{item.source}' is no longer part of the download (deselected in qBittorrent?)")
        elif later.role is not item.role:
            found.append(f"'{item.source}' now reads as {later.role.value}, not {item.role.value}")
        elif _key(later) != _key(item):
            found.append(f"'{item.source}' is now {_numbering(later)}, not {_numbering(item)}")
    known = {item.source for item in before.plan.items}
    found += [f"'{i.source}' is new ({i.role.value})" for i in after.plan.items
              if i.source not in known and i.role is Role.VIDEO]
    found += [r.message for r in new_blockers(before.reasons, after.reasons)]
    return found


def new_blockers(before: Sequence[Reason], after: Sequence[Reason]) -> list[Reason]:
    """The blocking reasons of `after` whose code `before` did not have."""
    had = {r.code for r in before}
    return [r for r in after if is_blocking(r) and r.code not in had and r.code not in _OWN]


def in_words(changes: Sequence[str]) -> str:
    """The changes as one line: the first few, and how many more."""
    shown = "; ".join(changes[:LISTED])
    return shown + (f"; and {len(changes) - LISTED} more" if len(changes) > LISTED else "")
