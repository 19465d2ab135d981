"""The user's words in a recognition: context and hints combined by precedence, and what they add to it.

Precedence among the words: the newest hint, then older hints, then the context. What they state
sits below a human's pinned override and a candidate a human chose, and above the release parser
and the LLM (docs/recognition.md, "Context and hints").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from jellybit.core.context import ContextReading, Finding, read_context
from jellybit.core.context_words import TERMS
from jellybit.core.numbering import FileOverride, Overrides
from jellybit.core.ports import LlmFileAnswer
from jellybit.core.reasons import reason
from jellybit.core.records import Candidate, Reason
from jellybit.core.release import Release
from jellybit.core.title_match import normalize_title, transliterate
from jellybit.core.word_match import matches, name_keys, who

MAX_WORDS_SHOWN = 12
# Which reading field a finding sets (provider, provider_id and provider_kind travel together).
_FIELD = {"season": "season", "episode": "episode", "year": "year", "media_type": "media_type",
          "anime": "anime", "country": "country", "provider": "provider_id", "imdb": "imdb",
          "title": "titles", "audio_language": "audio_languages", "subtitle_language": "subtitle_languages"}
_TOGETHER = {"provider": ("provider", "provider_id", "provider_kind")}


@dataclass(frozen=True)
class Said:
    """One text a human wrote and how it reads: the context, or one hint."""

    source: str                      # "context" | "hint"
    reading: ContextReading

    @property
    def who(self) -> str:
        """`your context` / `your hint`."""
        return f"your {self.source}"


@dataclass(frozen=True)
class Stated:
    """The context and every hint combined; `reading` holds the values in force."""

    reading: ContextReading
    saids: tuple[Said, ...] = ()     # the newest hint first, the context last
    winners: Mapping[str, int] = field(default_factory=dict)     # reading field -> index into saids

    @property
    def names_a_work(self) -> bool:
        """A provider id or an IMDb id is stated."""
        return bool(self.reading.provider_id or self.reading.imdb)

    def reasons(self, names: Iterable[str], llm_read: bool, unused_ids: Iterable[str], torrent: Release,
                releases: Iterable[Release], season_pinned: bool, *, people: Sequence[str] = (),
                others: Iterable[str] = (), exact: bool = False) -> list[Reason]:
        """`context_reasons` for a recognition of this torrent and these file names."""
        return context_reasons(self, names=names, llm_read=llm_read, unused_ids=unused_ids,
                               named_seasons=named_seasons(torrent, releases), season_pinned=season_pinned,
                               people=people, others=others, exact=exact)

    def numbering(self, torrent: Release, releases: Mapping[str, Release], llm: Mapping[str, LlmFileAnswer],
                  overrides: Overrides) -> tuple[Release, Mapping[str, LlmFileAnswer]]:
        """The torrent reading and LLM answers a series is numbered from, with the words' season in.

        A season from the words is the default for files whose names give none, above the LLM's
        season for them (a human's pinned season is above both and is applied by the numbering).
        """
        season = self.reading.season
        if season is None or overrides.season is not None:
            return torrent, llm
        unnamed = {p for p, r in releases.items() if r.season is None or r.season_assumed}
        return replace(torrent, season=season, seasons=(season,), season_assumed=False), {
            p: replace(f, season=None) if p in unnamed else f
                                                 for p, f in llm.items()}

    def source(self, name: str) -> Said | None:
        """Whose words set a field of the combined reading."""
        index = self.winners.get(name)
        return self.saids[index] if index is not None else None


def read_stated(context: str, hints: Sequence[str]) -> Stated:
    """Read the context and every hint (stored oldest first) and combine them, the newest hint first."""
    saids = [Said("hint", read_context(h)) for h in reversed(hints) if isinstance(h, str)]
    saids.append(Said("context", read_context(context if isinstance(context, str) else "")))
    values: dict[str, Any] = {}
    winners: dict[str, int] = {}
    names = [f.name for f in fields(ContextReading) if f.name not in ("found", "unused", "ignored")]
    for index, said in enumerate(saids):
        for name in names:
            value = getattr(said.reading, name)
            if name in ("provider", "provider_kind") or name in winners or value in (None, (), False):
                continue
            winners[name] = index
            for together in (_TOGETHER["provider"] if name == "provider_id" else (name,)):
                values[together] = getattr(said.reading, together)
    if values.get("media_type") is None and values.get("anime"):
        values["media_type"] = "series"
    return Stated(ContextReading(**values), tuple(saids), winners)


def with_episode(stated: Stated, overrides: Overrides, videos: Sequence[str],
                 releases: Mapping[str, Release]) -> Overrides:
    """An episode from the words numbers the one video whose name gives none (a human's pin wins)."""
    episode = stated.reading.episode
    if episode is None or len(videos) != 1 or videos[0] in overrides.files:
        return overrides
    parsed = releases.get(videos[0])
    if parsed is not None and (parsed.episodes or parsed.absolute_episodes or parsed.air_date):
        return overrides
    return replace(overrides, files={**overrides.files, videos[0]: FileOverride(episodes=(episode,))})


def imdb_pick(candidates: Iterable[Candidate], imdb: str) -> Candidate | None:
    """The candidate whose external ids carry this IMDb id."""
    for candidate in candidates:
        for key in ("ids", "external_ids"):
            ids = candidate.details.get(key)
            if isinstance(ids, Mapping) and str(ids.get("imdb") or "").lower() == imdb:
                return candidate
    return None


def _tokens(names: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for name in names:
        normal = normalize_title(name)
        found.update(normal.split())
        found.update(transliterate(normal).split())
    return found


def _confirmed(word: str, known: set[str]) -> bool:
    parts = normalize_title(word).split()
    return bool(parts) and all(p in known or transliterate(p) in known for p in parts)


def _shown(words: Sequence[str]) -> str:
    listed = ", ".join(f"“{w if len(w) <= 60 else w[:59] + '…'}”" for w in words[:MAX_WORDS_SHOWN])
    return listed + (f" and {len(words) - MAX_WORDS_SHOWN} more" if len(words) > MAX_WORDS_SHOWN else "")


def _kept(stated: Stated, index: int, finding: Finding) -> bool:
    """Whether this finding's value is the one in force (not replaced by a newer hint)."""
    name = _FIELD[finding.what]
    return stated.winners.get(name) == index or getattr(stated.reading, name) == getattr(
        stated.saids[index].reading, name)


# Kinds of word that, unread, could change the decision: numbers (`вторая`), negations, season,
# episode, year, type and country words, and words that pick another film of a series.
_DECIDING_KINDS = ("number", "negation", "season", "episode", "year", "media", "country")
_SEQUEL = (r"parts?|sequel|prequel|remake|original|част\w*|продолжени\w*|сиквел\w*|приквел\w*|ремейк\w*"
           r"|оригинал\w*")
_DECIDING = re.compile("|".join([*(f"(?:{t.pattern})" for t in TERMS if t.kind in _DECIDING_KINDS),
                                 _SEQUEL]), re.IGNORECASE)


def _could_decide(word: str, others: frozenset[str]) -> bool:
    """A number, season, type, year or country word, or another candidate's title may change the decision."""
    if any(c.isdigit() for c in word) or _DECIDING.fullmatch(word.strip(".,;:!?«»\"'()").casefold()):
        return True
    return bool(others) and matches(word, others)


def context_reasons(stated: Stated, *, names: Iterable[str], llm_read: bool,
                    unused_ids: Iterable[str] = (), named_seasons: Iterable[int] = (),
                    season_pinned: bool = False, people: Sequence[str] = (), others: Iterable[str] = (),
                    exact: bool = False) -> list[Reason]:
    """`context_read` (what the words said), `context_unused`, `context_note` and `context_season`.

    `names`: the release name and the recognized and chosen titles; a word found in them confirms
    them and counts as used, and so does a word naming one of the chosen work's `people` (cast and
    crew, in any script or Russian case). `others`: the other candidates' names, which a word must
    not name unnoticed. `llm_read`: an LLM answered and so read every word. `unused_ids`: `provider`
    / `imdb` when the stated id picked no candidate. `named_seasons`: the seasons the torrent and
    file names carry. `exact`: the name evidence is exact and nothing contradicts it; then a word
    that matches nothing and could not change the decision is a note, not a blocker.
    """
    missed = set(unused_ids)
    known = _tokens(names)
    people_keys = name_keys(people)
    other_keys = name_keys(others) - name_keys(names)
    read_parts, unused_parts, note_parts = [], [], []
    for index, said in enumerate(stated.saids):
        shown, left = [], list(said.reading.unused)
        for finding in said.reading.found:
            text, kept = finding.describe(), _kept(stated, index, finding)
            if not kept:
                text += ", replaced by a newer hint"
            elif finding.what in missed:
                text += ": no candidate carries this id" if finding.what == "imdb" else \
                    ": the provider does not confirm this id"
                left.append(finding.words)
            shown.append(text)
        shown = list(dict.fromkeys(shown))
        left = [w for w in dict.fromkeys(left) if not _confirmed(w, known)]
        named = [(w, who(w, people)) for w in left if not _could_decide(w, other_keys)
                 and matches(w, people_keys)]
        shown += [f"“{w}” names {person} of the chosen work" for w, person in named]
        left = [w for w in left if w not in {w for w, _ in named}]
        blocking = [w for w in left if not exact or _could_decide(w, other_keys)]
        if shown:
            more = f" and {len(shown) - MAX_WORDS_SHOWN} more" if len(shown) > MAX_WORDS_SHOWN else ""
            read_parts.append(f"from {said.who}: " + ", ".join(shown[:MAX_WORDS_SHOWN]) + more)
        if blocking:
            unused_parts.append(f"these words of {said.who} were not used: {_shown(blocking)}")
        if len(blocking) < len(left):
            quiet = [w for w in left if w not in blocking]
            note_parts.append(f"these words of {said.who} matched nothing and could not change the "
                              f"decision: {_shown(quiet)}")
    found: list[Reason] = []
    if read_parts:
        found.append(reason("context_read", "; ".join(read_parts)))
    if unused_parts and not llm_read:
        found.append(reason("context_unused", "; ".join(unused_parts)))
    if note_parts and not llm_read:
        found.append(reason("context_note", "; ".join(note_parts)))
    seasons = set(named_seasons)
    season = stated.reading.season
    source = stated.source("season")
    if season is not None and source is not None and not season_pinned and len(seasons) == 1 \
            and season not in seasons:
        found.append(reason("context_season", f"{source.who} says season {season}, the file names say "
                            f"season {seasons.pop()}"))
    return found


def named_seasons(torrent: Release, releases: Iterable[Release]) -> set[int]:
    """Every season the torrent name and the file names carry (not the 1 a season-less name is given)."""
    seasons: set[int] = set()
    for release in (torrent, *releases):
        if release.season_assumed:
            continue
        if release.season is not None:
            seasons.add(release.season)
        seasons.update(release.seasons)
    return seasons
