"""Recognition results and the plan: what each source file is and where it goes."""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from jellybit.core.frozen import build


class MediaType(StrEnum):
    """What a download is."""

    MOVIE = "movie"
    SERIES = "series"


class Role(StrEnum):
    """What one source file is for."""

    VIDEO = "video"
    SUBTITLE = "subtitle"
    AUDIO = "audio"
    EXTRA = "extra"
    SAMPLE = "sample"
    IGNORED = "ignored"


class Recommendation(StrEnum):
    """beets-style recommendation; only STRONG is applied without a human."""

    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    STRONG = "strong"


@dataclass(frozen=True)
class SourceFile:
    """One file of a torrent: its path inside the torrent ('/'-separated) and size in bytes."""

    path: str
    size: int


@dataclass(frozen=True)
class Work:
    """The film or series a file belongs to (movie packs carry several)."""

    media_type: MediaType
    title: str
    year: int | None = None
    provider: str | None = None      # tmdb | tvdb | tvmaze | imdb
    provider_id: str | None = None
    original_title: str | None = None


@dataclass(frozen=True)
class PlanItem:
    """One source file: its role, its numbering, and (once laid out) its target."""

    source: str
    size: int
    role: Role
    season: int | None = None
    episodes: tuple[int, ...] = ()
    absolute_episodes: tuple[int, ...] = ()
    air_date: str | None = None          # daily shows, ISO date
    part: int | None = None              # movie multi-part (-part1)
    version: str | None = None           # movie multi-version label (" - 1080p")
    extra_kind: str | None = None        # trailers | featurettes | behind the scenes | ...
    language: str | None = None          # subtitle / audio language (ISO 639)
    flags: tuple[str, ...] = ()          # default | forced | sdh
    track_title: str | None = None       # second same-language subtitle gets a title
    attached_to: str | None = None       # subtitle/audio: the video source it follows
    work: Work | None = None             # set for movie packs; else the plan's work
    library: str | None = None           # movies | series (set by layout)
    target: str | None = None            # path relative to the library root (set by layout)
    status: str | None = None            # planned | exists | collision | skipped (set by layout)
    note: str | None = None

    def with_(self, **changes: Any) -> PlanItem:
        """Return a copy with some fields changed."""
        return replace(self, **changes)

    def __eq__(self, other: object) -> bool:
        # Field by field like the generated __eq__, but as one dictionary comparison in C: an apply
        # compares the plan it was given with its preview's, thousands of items (docs/layout.md).
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__    # type: ignore[attr-defined]


@dataclass(frozen=True)
class Film:
    """One film of a movie pack, matched on its own: what was read, what it is, and how sure that is."""

    key: str                             # its first video's source path: names the film in the download
    title: str                           # the title read (the names or the LLM)
    year: int | None = None
    sources: tuple[str, ...] = ()        # its videos
    provider: str | None = None          # the match (None: nothing found)
    provider_id: str | None = None
    match_title: str | None = None
    match_year: int | None = None
    confidence: float | None = None
    recommendation: Recommendation = Recommendation.NONE
    reasons: tuple[Reason, ...] = ()
    candidates: tuple[str, ...] = ()     # `provider:provider_id` of its candidates (the recognition has them)

    @property
    def confirmed(self) -> bool:
        """Matched strongly enough to be laid out without a human."""
        return (self.recommendation is Recommendation.STRONG and self.provider is not None
                and self.provider_id is not None and not any(r.blocking for r in self.reasons))


@dataclass(frozen=True)
class Plan:
    """Every source file of a download, in source order."""

    items: tuple[PlanItem, ...] = ()
    folder: str | None = None            # the title folder (relative to the library root)
    films: tuple[Film, ...] = ()         # a movie pack's films, each matched on its own

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, no whitespace variance) for the store and the wire."""
        # What dataclasses.asdict gives, without its deep copy of every value (a pack has thousands).
        works: dict[int, dict[str, Any] | None] = {}
        items = []
        for item in self.items:
            data = {name: getattr(item, name) for name in _ITEM_FIELDS}
            work = item.work
            if work is not None:
                if id(work) not in works:
                    works[id(work)] = {name: getattr(work, name) for name in _WORK_FIELDS}
                data["work"] = works[id(work)]
            items.append(data)
        data = {"folder": self.folder, "items": items, "films": [_film_json(f) for f in self.films]}
        return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | None) -> Plan:
        """Parse what to_json wrote."""
        if not text:
            return cls()
        data = json.loads(text)
        items = []
        works: dict[tuple[Any, ...], Work] = {}
        roles = {role.value: role for role in Role}
        for raw in data.get("items", []):
            work = raw.get("work")
            if work is not None:
                key = tuple(sorted(work.items()))
                if key not in works:
                    works[key] = Work(**{**work, "media_type": MediaType(work["media_type"])})
                work = works[key]
            raw["role"] = roles.get(raw["role"]) or Role(raw["role"])
            raw["episodes"] = tuple(raw.get("episodes", ()))
            raw["absolute_episodes"] = tuple(raw.get("absolute_episodes", ()))
            raw["flags"] = tuple(raw.get("flags", ()))
            raw["work"] = work
            if raw.keys() - _ITEM_DEFAULTS.keys() or not _ITEM_REQUIRED <= raw.keys():
                raise TypeError(f"not a plan item: fields {sorted(raw)}")
            items.append(build(PlanItem, [raw[n] if n in raw else _ITEM_DEFAULTS[n] for n in _ITEM_FIELDS]))
        films = tuple(_film_from(f) for f in data.get("films", ()))
        return cls(items=tuple(items), folder=data.get("folder"), films=films)

    def videos(self) -> list[PlanItem]:
        """Return the video items."""
        return [i for i in self.items if i.role is Role.VIDEO]


def _film_json(film: Film) -> dict[str, Any]:
    data = {f.name: getattr(film, f.name) for f in fields(Film)}
    data["reasons"] = [{f.name: getattr(r, f.name) for f in fields(Reason)} for r in film.reasons]
    data["sources"], data["candidates"] = list(film.sources), list(film.candidates)
    return data


def _film_from(raw: dict[str, Any]) -> Film:
    return Film(**{**raw, "sources": tuple(raw.get("sources", ())),
                   "candidates": tuple(raw.get("candidates", ())),
                   "recommendation": Recommendation(raw.get("recommendation", "none")),
                   "reasons": tuple(Reason(**r) for r in raw.get("reasons", ()))})


_ITEM_FIELDS = tuple(f.name for f in fields(PlanItem))
_ITEM_DEFAULTS = {f.name: f.default for f in fields(PlanItem)}
_ITEM_REQUIRED = frozenset(f.name for f in fields(PlanItem) if f.default is MISSING)
_WORK_FIELDS = tuple(f.name for f in fields(Work))


@dataclass(frozen=True)
class Reason:
    """One named penalty or blocker, with the sentence a human reads."""

    code: str
    message: str
    weight: float = 0.0
    blocking: bool = False


@dataclass(frozen=True)
class Candidate:
    """A metadata match offered by a provider."""

    provider: str
    provider_id: str
    media_type: MediaType | None
    title: str
    year: int | None = None
    original_title: str | None = None
    url: str | None = None
    poster_url: str | None = None
    overview: str | None = None
    distance: float | None = None
    details: dict[str, Any] = field(default_factory=dict)  # {"seasons": {"1": 10, ...}}
    chosen: bool = False
    id: str | None = None                                    # set once stored


@dataclass(frozen=True)
class RecognitionDraft:
    """What a recognizer returns; the engine stores it as the current recognition."""

    media_type: MediaType | None
    title: str | None
    year: int | None
    plan: Plan
    original_title: str | None = None
    provider: str | None = None
    provider_id: str | None = None
    confidence: float | None = None
    recommendation: Recommendation = Recommendation.NONE
    reasons: tuple[Reason, ...] = ()
    raw_llm: str | None = None
    candidates: tuple[Candidate, ...] = ()

    @property
    def automatic(self) -> bool:
        """Only the strongest recommendation with a confirmed match and no blocker is automatic."""
        # A movie pack has no one work: it is automatic when every film of it is confirmed.
        matched = (self.provider is not None and self.provider_id is not None) or (
            bool(self.plan.films) and all(f.confirmed for f in self.plan.films))
        return (
            self.recommendation is Recommendation.STRONG
            and matched
            and not any(r.blocking for r in self.reasons)
        )


@dataclass(frozen=True)
class Recognition(RecognitionDraft):
    """A stored recognition attempt."""

    id: str = ""
    download_id: str = ""
    attempt_no: int = 1
    is_current: bool = True
    created_at: str = ""
