"""The LLM's structured answer: pydantic models, the strict JSON schema, and validation against the files."""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from jellybit.core.editions import normalize_edition
from jellybit.core.ports import LlmAnswer, LlmFileAnswer
from jellybit.core.prompt import Listing, clean

LLM_MAX_SEASON = 100            # what an LLM answer may say (a larger number is a misreading)
LLM_MAX_EPISODE = 9_999
MAX_PART = 99
MIN_YEAR, MAX_YEAR = 1870, 2100
MAX_TITLE_CHARS = 300
MAX_ENTRIES = 5_000              # file entries looked at; a hostile answer cannot make us loop forever
MAX_NOTES = 50                   # `dropped` notes kept; the rest are counted

ROLES = ("video", "subtitle", "audio", "extra", "sample", "ignored")
EXTRA_KINDS = ("trailers", "featurettes", "behind the scenes", "deleted scenes", "interviews", "scenes",
               "shorts", "clips", "extras", "other")

_MEDIA = {
    "movie": "movie", "movies": "movie", "film": "movie", "films": "movie", "feature": "movie",
    "movie pack": "movie", "collection": "movie",
    "series": "series", "tv": "series", "show": "series", "tv show": "series", "tv series": "series",
    "tvshow": "series", "episode": "series", "episodes": "series", "season": "series",
    "season pack": "series", "season_pack": "series", "anime": "series", "miniseries": "series",
    "mini-series": "series", "documentary series": "series",
}
_ROLES = {
    **{r: r for r in ROLES},
    "videos": "video", "main": "video", "movie": "video", "episode": "video", "feature": "video",
    "subtitles": "subtitle", "sub": "subtitle", "subs": "subtitle", "caption": "subtitle",
    "audio track": "audio", "external audio": "audio", "soundtrack": "audio",
    "extras": "extra", "bonus": "extra", "trailer": "extra", "featurette": "extra",
    "samples": "sample", "ignore": "ignored", "other": "ignored", "junk": "ignored", "none": "ignored",
}
_KINDS = {**{k: k for k in EXTRA_KINDS}, **{k.rstrip("s"): k for k in EXTRA_KINDS if k.endswith("s")},
          "behind-the-scenes": "behind the scenes", "bts": "behind the scenes",
          "deleted": "deleted scenes", "bonus": "extras", "extra": "extras"}


def _note(info: ValidationInfo, text: str) -> None:
    if info.context is not None:
        info.context.setdefault("notes", []).append(text)


def _where(info: ValidationInfo) -> str:
    file = info.data.get("file") if info.data else None
    return f" for {clean(str(file), 80)!r}" if file else ""


def _in_range(value: int | None, low: int, high: int, what: str, info: ValidationInfo) -> int | None:
    if value is None or low <= value <= high:
        return value
    _note(info, f"{what} {value}{_where(info)} is out of range ({low}-{high}); dropped")
    return None


class FileEntry(BaseModel):
    """One file line as the model reads it."""

    model_config = ConfigDict(extra="ignore")

    file: str = Field(description='The line id as listed, e.g. "f3".',
                      validation_alias=AliasChoices("file", "path", "id"))
    role: Literal["video", "subtitle", "audio", "extra", "sample", "ignored"]
    season: int | None = Field(None, description="Season number; 0 for specials.")
    episodes: list[int] = Field(default_factory=list, description="Episode numbers in this file.")
    part: int | None = Field(None, description="Movie part number (CD1, Part 2).")
    extra_kind: Literal[EXTRA_KINDS] | None = None  # type: ignore[valid-type]
    language: str | None = Field(None, description="ISO 639-1 code of a subtitle or audio file.")
    work_title: str | None = Field(None, description="Movie packs: the film this file is.")
    work_year: int | None = None
    edition: str | None = Field(None, description="Movies: the cut this file is (Director's Cut, Extended, "
                                "Theatrical, IMAX …).")

    @field_validator("file", mode="before")
    @classmethod
    def _file(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("role", mode="before")
    @classmethod
    def _role(cls, value: Any) -> Any:
        return _ROLES.get(value.strip().lower(), value) if isinstance(value, str) else value

    @field_validator("season")
    @classmethod
    def _season(cls, value: int | None, info: ValidationInfo) -> int | None:
        return _in_range(value, 0, LLM_MAX_SEASON, "season", info)

    @field_validator("episodes", mode="before")
    @classmethod
    def _episodes(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return []
        items = value if isinstance(value, list) else [value]
        kept: list[int] = []
        for item in items:
            number = _integer(item)
            if number is None or not 0 <= number <= LLM_MAX_EPISODE:
                _note(info, f"episode {clean(str(item), 20)}{_where(info)} is not a valid episode "
                      f"number (0-{LLM_MAX_EPISODE}); dropped")
            elif number not in kept:
                kept.append(number)
        return kept

    @field_validator("part")
    @classmethod
    def _part(cls, value: int | None, info: ValidationInfo) -> int | None:
        return _in_range(value, 1, MAX_PART, "part", info)

    @field_validator("extra_kind", mode="before")
    @classmethod
    def _kind(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or not isinstance(value, str):
            return value
        kind = _KINDS.get(value.strip().lower().replace("_", " "))
        if kind is None:
            _note(info, f"unknown extra kind {clean(value, 40)!r}{_where(info)}; dropped")
        return kind

    @field_validator("language", mode="before")
    @classmethod
    def _language(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str) or not value.strip():
            return None if isinstance(value, str) else value
        code = value.strip().lower().replace("_", "-")
        if len(code) > 35 or not all(part.isascii() and part.isalnum() for part in code.split("-")):
            _note(info, f"language {clean(value, 40)!r}{_where(info)} is not a language code; dropped")
            return None
        return code

    @field_validator("work_title", mode="before")
    @classmethod
    def _work_title_in(cls, value: Any) -> Any:
        return _text(value)

    @field_validator("work_title")
    @classmethod
    def _work_title(cls, value: str | None) -> str | None:
        return _title(value)

    @field_validator("edition", mode="before")
    @classmethod
    def _edition(cls, value: Any) -> Any:
        return normalize_edition(value) if isinstance(value, str) else value

    @field_validator("work_year")
    @classmethod
    def _work_year(cls, value: int | None, info: ValidationInfo) -> int | None:
        return _in_range(value, MIN_YEAR, MAX_YEAR, "year", info)


def _integer(item: Any) -> int | None:
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return item
    if isinstance(item, float) and item.is_integer():
        return int(item)
    if isinstance(item, str) and item.strip().removeprefix("-").isdecimal():
        return int(item.strip())
    return None


def _text(value: Any) -> Any:
    """Titles like 1917 or 2012 sometimes arrive as JSON numbers."""
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _title(value: str | None) -> str | None:
    if value is None:
        return None
    text = " ".join(value.split())
    return text[:MAX_TITLE_CHARS] or None


class AnswerModel(BaseModel):
    """The whole answer: what the download is and a reading of its file lines."""

    model_config = ConfigDict(extra="ignore")

    media_type: Literal["movie", "series"] | None = None
    title: str | None = None
    original_title: str | None = None
    year: int | None = None
    files: list[FileEntry]
    notes: str | None = None

    @field_validator("media_type", mode="before")
    @classmethod
    def _media_type(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):
            return value
        media = _MEDIA.get(value.strip().lower())
        if media is None and value.strip():
            _note(info, f"unknown media type {clean(value, 40)!r}; dropped")
        return media

    @field_validator("title", "original_title", mode="before")
    @classmethod
    def _titles_in(cls, value: Any) -> Any:
        return _text(value)

    @field_validator("title", "original_title")
    @classmethod
    def _titles(cls, value: str | None) -> str | None:
        return _title(value)

    @field_validator("year")
    @classmethod
    def _year(cls, value: int | None, info: ValidationInfo) -> int | None:
        return _in_range(value, MIN_YEAR, MAX_YEAR, "year", info)

    @field_validator("files", mode="before")
    @classmethod
    def _files(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, list):
            return value                     # not a list: the answer is invalid as a whole
        kept = []
        if len(value) > MAX_ENTRIES:
            _note(info, f"{len(value) - MAX_ENTRIES} file entries beyond the first {MAX_ENTRIES}; dropped")
        for item in value[:MAX_ENTRIES]:
            try:
                kept.append(FileEntry.model_validate(item, context=info.context))
            except ValidationError as exc:
                ref = item.get("file") if isinstance(item, dict) else None
                what = f"file entry {clean(str(ref), 80)!r}" if ref is not None else "a file entry"
                _note(info, f"{what} is malformed ({_first_error(exc)}); dropped")
        return kept

    @field_validator("notes")
    @classmethod
    def _notes(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return value.strip()[:1000] or None


def _first_error(exc: ValidationError) -> str:
    item = exc.errors()[0]
    where = ".".join(str(p) for p in item["loc"])
    return clean(f"{where}: {item['msg']}" if where else item["msg"], 160)


# ---------------------------------------------------------------- the schema sent to the server


def _strict(node: Any, defs: dict[str, Any]) -> Any:
    """Inline $refs and make every object closed with all properties required (OpenAI strict mode)."""
    if isinstance(node, list):
        return [_strict(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _strict(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]), defs)
    out = {key: _strict(value, defs) for key, value in node.items()
           if key not in ("$defs", "default", "title", "properties")}
    if "properties" in node:             # property names are data here, never annotations to drop
        out["properties"] = {name: _strict(value, defs) for name, value in node["properties"].items()}
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def strict_schema() -> dict[str, Any]:
    """The answer's JSON schema, self-contained and strict (every field required, nullable instead)."""
    schema = AnswerModel.model_json_schema()
    return _strict(schema, schema.get("$defs", {}))


ANSWER_SCHEMA = strict_schema()


# ---------------------------------------------------------------- from the model's reading to an LlmAnswer


def _file_answer(path: str, entry: FileEntry, episodes: tuple[int, ...]) -> LlmFileAnswer:
    return LlmFileAnswer(
        path=path, role=entry.role, season=entry.season, episodes=episodes, part=entry.part,
        extra_kind=entry.extra_kind, language=entry.language, work_title=entry.work_title,
        work_year=entry.work_year, edition=entry.edition,
    )


def _capped(notes: list[str]) -> tuple[str, ...]:
    if len(notes) <= MAX_NOTES:
        return tuple(notes)
    return (*notes[:MAX_NOTES], f"… and {len(notes) - MAX_NOTES} more notes")


def validate_answer(data: Any, raw: str, listing: Listing) -> LlmAnswer:
    """Validate decoded JSON against the schema and the real files; raises ValidationError if unusable.

    References are resolved through the listing (line ids, collapsed runs, paths); anything that
    names no existing file, and every value out of range, is dropped with a note in `dropped`.
    """
    context: dict[str, Any] = {"notes": []}
    model = AnswerModel.model_validate(data, context=context)
    notes: list[str] = context["notes"]
    single: dict[str, LlmFileAnswer] = {}
    ranged: dict[str, LlmFileAnswer] = {}
    for entry in model.files:
        paths = listing.resolve(entry.file)
        if not paths:
            notes.append(f"the answer names a file that is not in the torrent: {clean(entry.file, 120)!r}; "
                         "dropped")
            continue
        if len(paths) == 1:
            target = single
            numbered: list[tuple[int, ...]] = [tuple(entry.episodes)]
        else:
            target = ranged
            if len(entry.episodes) == len(paths):
                numbered = [(number,) for number in entry.episodes]
            else:
                if entry.episodes:
                    notes.append(f"{len(entry.episodes)} episode numbers for {clean(entry.file, 80)!r}, "
                                 f"a line of {len(paths)} files; episode numbers dropped")
                numbered = [()] * len(paths)
        for path, episodes in zip(paths, numbered, strict=True):
            if path in target:
                notes.append(f"{clean(path, 120)!r} is described twice; the second reading was dropped")
                continue
            target[path] = _file_answer(path, entry, episodes)
    # A reading of one file beats the reading of the run it belongs to.
    merged = {**ranged, **single}
    files = tuple(merged[path] for path in listing.paths if path in merged)
    return LlmAnswer(
        media_type=model.media_type, title=model.title, original_title=model.original_title,
        year=model.year, files=files, raw=raw, dropped=_capped(notes), notes=model.notes,
    )
