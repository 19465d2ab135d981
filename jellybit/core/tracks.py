"""Subtitle and audio tracks: language and flags in order — a human's pin, the file name, the LLM, the text.

The file name's reading is the classifier's (`core/classify`). Then a pinned language or flags
win, the LLM's language fills a track whose name gave none, and the text is read only for the
subtitles still without one, in a text format, that follow a video. Similar files (one path but
for its numbers, e.g. the English track of every episode) form a group: at most PER_GROUP of a
group and MAX_READ files in all are read, and a group whose readings agree shares them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from jellybit.core.confidence import reason
from jellybit.core.frozen import evolve
from jellybit.core.languages import language_code
from jellybit.core.names import source_ext
from jellybit.core.numbering import Overrides
from jellybit.core.ports import LlmFileAnswer, SubtitleSample
from jellybit.core.records import PlanItem, Reason, Role
from jellybit.core.subtitle_text import TEXT_EXTENSIONS

MAX_READ = 40                    # subtitle files read per download, whatever its size
PER_GROUP = 2                    # files read per group of similar files (the first and the last)
FORCED_MAX_SHARE = 0.2           # a forced track is at most this share of its full same-language sibling
FORCED_MIN_FULL_BYTES = 8 * 1024
_DIGITS = re.compile(r"\d+")
_LISTED = 5
_FLAG_ORDER = ("default", "forced", "sdh")


@dataclass(frozen=True)
class Sampling:
    """Which subtitle files to read, the groups they speak for, and the groups left unread (the cap)."""

    read: tuple[str, ...] = ()
    groups: tuple[tuple[str, ...], ...] = ()
    unread: frozenset[str] = frozenset()


def _noted(item: PlanItem, text: str, **changes: object) -> PlanItem:
    # evolve, not dataclasses.replace: a season pack changes thousands of items here
    return evolve(item, note=f"{item.note}; {text}" if item.note else text, **changes)


def _flags(flags: Collection[str]) -> tuple[str, ...]:
    return tuple(f for f in _FLAG_ORDER if f in flags)


def settle_known(
    items: Sequence[PlanItem], overrides: Overrides, llm: Mapping[str, LlmFileAnswer], *,
    source: str = "the LLM",
) -> list[PlanItem]:
    """A pinned language/flags win; the LLM's language fills a track whose name gave none."""
    out = []
    for item in items:
        if item.role in (Role.SUBTITLE, Role.AUDIO):
            pinned = overrides.files.get(item.source)
            language, flags = (pinned.language, pinned.flags) if pinned is not None else (None, None)
            notes = []
            if flags is not None and _flags(flags) != item.flags:
                notes.append("flags pinned by a human: " + (", ".join(_flags(flags)) or "none"))
            if language:
                if language != item.language:
                    notes.insert(0, f"language {language} pinned by a human")
            elif item.language is None and item.source in llm:
                language = language_code(llm[item.source].language)
                if language:
                    notes.append(f"language {language} from {source}")
                    if flags is None and not item.flags and llm[item.source].flags:
                        flags = llm[item.source].flags       # a previous recognition's flags
            if notes:
                flagged = item.flags if flags is None else _flags(flags)
                item = _noted(item, "; ".join(notes), language=language or item.language, flags=flagged)
        out.append(item)
    return out


def plan_sampling(
    items: Sequence[PlanItem], *, max_read: int = MAX_READ, per_group: int = PER_GROUP,
) -> Sampling:
    """Group the subtitles that need their text read, and choose the few files to read."""
    groups: dict[tuple[str, int], list[str]] = {}
    rank: Counter[tuple[str | None, str]] = Counter()
    for item in items:
        if (item.role is not Role.SUBTITLE or item.language or item.attached_to is None
                or source_ext(item.source) not in TEXT_EXTENSIONS):
            continue
        key = _DIGITS.sub("#", item.source.casefold())
        # Two tracks of one video with the same name pattern (Subs/1.srt, Subs/2.srt) are two groups.
        n = rank[(item.attached_to, key)]
        rank[(item.attached_to, key)] += 1
        groups.setdefault((key, n), []).append(item.source)
    read: list[str] = []
    unread: set[str] = set()
    for members in groups.values():
        chosen = members[:1] + (members[-1:] if per_group > 1 and len(members) > 1 else [])
        if len(read) + len(chosen) > max_read:
            unread.update(members)
            continue
        read.extend(chosen)
    return Sampling(tuple(read), tuple(tuple(m) for m in groups.values()), frozenset(unread))


def _how(sample: SubtitleSample) -> str:
    return f"confidence {sample.confidence:.2f}, {sample.encoding}"


def apply_samples(
    items: Sequence[PlanItem], sampling: Sampling, samples: Mapping[str, SubtitleSample], *,
    pinned_flags: Collection[str] = (), not_read: str = "its text was not read",
) -> list[PlanItem]:
    """Fill languages (and the SDH/forced flags a text can show) from what the sampled files say."""
    index_of = {item.source: index for index, item in enumerate(items)}
    out = list(items)
    detected: list[int] = []
    for group in sampling.groups:
        found = [(s, samples[s]) for s in group if s in samples]
        languages = {sample.language for _, sample in found}
        shared = found[0][1].language if found and len(languages) == 1 else None
        for source in group:
            index = index_of[source]
            item, own = out[index], samples.get(source)
            sdh = None
            if own is not None and own.language:
                language, how = own.language, f"detected from its text ({_how(own)})"
                if own.sdh:
                    sdh = f"{own.sdh_cues} of {own.cues} cues describe sounds or name the speaker"
            elif own is None and shared:
                language = shared
                how = f"detected from the text of {len(found)} similar file(s) such as {found[0][0]}"
                if all(sample.sdh for _, sample in found):
                    sdh = "its similar files' cues describe sounds or name the speaker"
            else:
                why = (own.problem if own is not None else
                       f"not read (at most {MAX_READ} subtitle files are read per download)"
                       if source in sampling.unread else
                       "its similar files read as different languages" if found else not_read)
                out[index] = _noted(item, f"language unknown: {why}")
                continue
            item = _noted(item, f"language {language} {how}", language=language)
            if sdh and not item.flags and source not in pinned_flags:
                item = _noted(item, f"hearing-impaired: {sdh}", flags=("sdh",))
            out[index] = item
            detected.append(index)
    return _untitle(_mark_forced(out, detected, pinned_flags), detected)


def _mark_forced(
    items: list[PlanItem], detected: Sequence[int], pinned_flags: Collection[str],
) -> list[PlanItem]:
    """A detected track far smaller than a full same-language, same-format track of its video is forced.

    Cue counts are compared through file sizes (one format has about as many bytes per cue); a
    forced track alone, with no full track of its language beside it, cannot be told from the
    whole subtitle of a short film, so it is left as it is.
    """
    largest: dict[tuple[str | None, str | None, str], int] = defaultdict(int)
    for item in items:
        if item.role is Role.SUBTITLE and item.language and "forced" not in item.flags:
            key = (item.attached_to, item.language, source_ext(item.source))
            largest[key] = max(largest[key], item.size)
    for index in detected:
        item = items[index]
        if item.flags or item.source in pinned_flags:
            continue
        full = largest[(item.attached_to, item.language, source_ext(item.source))]
        if full >= FORCED_MIN_FULL_BYTES and 0 < item.size <= FORCED_MAX_SHARE * full:
            items[index] = _noted(item, f"forced: {item.size} bytes against {full} for the full "
                                  f"{item.language} track of its video", flags=("forced",))
    return items


def _untitle(items: list[PlanItem], detected: Sequence[int]) -> list[PlanItem]:
    """Tracks titled only to keep two unknown languages apart lose the title once they differ."""
    shares = Counter((i.attached_to, i.role, i.language, i.flags, source_ext(i.source)) for i in items
                     if i.role in (Role.SUBTITLE, Role.AUDIO))
    for index in detected:
        item = items[index]
        key = (item.attached_to, item.role, item.language, item.flags, source_ext(item.source))
        if item.track_title and shares[key] == 1:
            items[index] = evolve(item, track_title=None)
    return items


def unknown_language(items: Sequence[PlanItem]) -> tuple[list[PlanItem], list[Reason]]:
    """Note every laid subtitle that still has no language, and one informational reason listing them."""
    out = list(items)
    unknown = []
    for index, item in enumerate(items):
        if item.role is not Role.SUBTITLE or item.attached_to is None or item.language:
            continue
        unknown.append(item.source)
        if "language unknown" not in (item.note or ""):
            ext = source_ext(item.source)
            why = (f"a picture-based subtitle ({ext}) has no text to read" if ext not in TEXT_EXTENSIONS
                   else "its text was not read")
            out[index] = _noted(item, f"language unknown: {why}")
    if not unknown:
        return out, []
    shown = ", ".join(unknown[:_LISTED]) + (f" and {len(unknown) - _LISTED} more" if len(unknown) > _LISTED
                                             else "")
    return out, [reason("subtitle_language_unknown", f"{len(unknown)} subtitle file(s) have no known "
                        f"language and are linked without a language tag: {shown}")]
