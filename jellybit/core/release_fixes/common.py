"""What the release-name corrections share: the working reading, the name's base, common patterns."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Reading = dict[str, Any]
Guess = Callable[[str, Mapping[str, Any] | None], dict[str, Any]]


_EXTENSION = re.compile(r"(?i)\.(mkv|mp4|m4v|avi|mov|wmv|ts|m2ts|mpg|mpeg|webm|flv|vob|srt|ass|ssa|sub|idx|"
                        r"vtt|sup|mka|ac3|dts|flac|aac|mp3|torrent|nfo)$")
# Markers that number episodes explicitly; without one, a bare number may belong to the title.
MARKER = re.compile(r"(?i)(?:(?<![a-z])s\d{1,4}(?![a-z])|s\d{1,4}[ ._-]?e\d|(?<!\d)\d{1,2}x\d{2,3}(?!\d)|"
                     r"(?<![a-z])e(?:p|pisode)?[ ._-]?\d|season|сезон|серия|серии|第|\bpart\b|\bchapter\b)")
LEAD_GROUP = re.compile(r"^\s*[\[【]([^\]】]{1,80})[\]】]")
ALL_BRACKETS = re.compile(r"^(?:\s*[\[【][^\]】]*[\]】])+\s*$")
BRACKET = re.compile(r"[\[【]([^\]】]*)[\]】]")
TAG = re.compile(
    r"(?i)^(?:\d{3,4}[pi]|[248]k|uhd|hdr(?:10)?|x26[45]|h\.?26[45]|hevc|avc|aac|flac|opus|ac3|dts|"
    r"(?:web|bd|dvd|hd|tv)(?:-?(?:dl|rip))?|blu-?ray|mp4|mkv|avi|\d{1,2}bit|big5|gb|chs|cht|batch|fin|end|"
    r"v\d|\d{1,4}(?:v\d)?|\d{1,4}\s*[-~]\s*\d{1,4}|[0-9a-f]{8}|(?!.*[组組社]$).*字幕.*|简.*|繁.*|"
    r".*(?:内封|外挂|内嵌|双语|雙語).*)$"
)
YEAR = re.compile(r"(?<!\d)(19\d{2}|20\d{2})(?!\d)")
_LATIN = re.compile(r"[A-Za-z]")
# Roman numerals as letters (`The Westward Ⅱ`) belong to Latin titles too.
_NON_LATIN = re.compile(r"[^\W\d_A-Za-z\u00c0-\u024f\u2160-\u2188]")
PREFIX_WORDS = re.compile(r"(?i)^(?:сериал|мини-сериал|мультсериал|аниме|фильм|мультфильм)\s+")
ALIAS_SPLIT = re.compile(r"\s+[/|]\s+")


def base_name(text: str) -> str:
    """The last path component without its media extension."""
    if "/" in text and " / " not in text:
        text = text.rstrip("/").rsplit("/", 1)[-1]
    return _EXTENSION.sub("", text)


def is_latin(text: str) -> bool:
    return bool(_LATIN.search(text)) and not _NON_LATIN.search(text)


def clean_title(text: str) -> str:
    text = LEAD_GROUP.sub("", text)
    text = re.split(r"[\[(]|(?<!\d)(?:19|20)\d{2}(?!\d)|\b[Ss]\d{1,2}(?:[Ee]\d|\b)", text)[0]
    text = PREFIX_WORDS.sub("", text.replace(".", " ").replace("_", " "))
    return " ".join(text.split()).strip(" -–:|,")


def note(r: Reading, code: str) -> None:
    if code not in r["corrections"]:
        r["corrections"].append(code)



_EPISODE_BEFORE = (r"(?<![a-z])(?:e|ep|eps|episode|episodio|épisode|folge|part|pt|chapter|cap|caap|capitulo|"
                   r"серия|серии|seriya|serija|serya)[ ._#-]*")
_EPISODE_AFTER = r"[ ._-]*(?:сер\b|серия|серии|seriya|serija|serya|(?:of|iz)[ ._-]?\d)"
_ROMAN = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x")
_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def episode_marked(base: str, number: int) -> bool:
    digits = rf"(?<!\d)0*{number}(?!\d)"
    pattern = rf"{_EPISODE_BEFORE}{digits}|{digits}{_EPISODE_AFTER}"
    if 1 <= number <= len(_ROMAN):
        pattern += rf"|(?<![a-z])part[ ._-]*(?:{_ROMAN[number - 1]}|{_WORDS[number - 1]})(?![a-z])"
    return bool(re.search(f"(?i){pattern}", base))


FANSUB_STYLE = re.compile(r"^\s*[\[(【]|[\[(][0-9A-Fa-f]{8}[\])]|^[^ .]*_[^ .]*_")

BESIDE = re.compile(r"(?i)(?:s\d{1,4}e\d{1,4}(?:-?e?\d{1,4})*|\d{1,2}x\d{1,3}(?:-\d{1,3})*)")


def _listify(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _language_code(value: Any) -> str | None:
    for attr in ("alpha2", "alpha3"):
        try:
            code = getattr(value, attr)
        except Exception:  # babelfish raises its own errors for codes without that form
            continue
        if code:
            return str(code)
    return None


def reading_of(text: str, raw: dict[str, Any]) -> dict[str, Any]:
    """Turn guessit's answer into the plain working form the corrections edit."""
    date = raw.get("date")
    episodes = [e for e in _listify(raw.get("episode")) if isinstance(e, int)]
    seasons = [s for s in _listify(raw.get("season")) if isinstance(s, int)]
    # `Пацаны | The Boys / Сезон 2`: guessit may give several titles; the first leads, the rest are aliases
    titles = [str(t) for t in _listify(raw.get("title")) if t]
    title = titles[0] if titles else None
    alternatives = [*titles[1:], *(str(a) for a in _listify(raw.get("alternative_title")))]
    return {
        "text": text,
        "type": raw.get("type"),
        "title": title,
        "alternative_titles": alternatives,
        "year": raw.get("year") if isinstance(raw.get("year"), int) else None,
        "seasons": seasons,
        "episodes": episodes,
        "absolute_episodes": [],
        "air_date": date.isoformat() if hasattr(date, "isoformat") else None,
        "part": raw.get("part") if isinstance(raw.get("part"), int) else None,
        "episode_title": str(raw["episode_title"]) if raw.get("episode_title") else None,
        "other": [str(o) for o in _listify(raw.get("other"))],
        "episode_details": [str(o) for o in _listify(raw.get("episode_details"))],
        "screen_size": str(raw["screen_size"]) if raw.get("screen_size") else None,
        "source": str(_listify(raw.get("source"))[0]) if raw.get("source") else None,
        "release_group": str(raw["release_group"]) if raw.get("release_group") else None,
        "crc32": raw.get("crc32"),
        "cd": raw.get("cd") if isinstance(raw.get("cd"), int) else None,
        "languages": [c for c in map(_language_code, _listify(raw.get("language"))) if c],
        "subtitle_languages": [c for c in map(_language_code, _listify(raw.get("subtitle_language"))) if c],
        "corrections": [],
        "ambiguous_episodes": [],
        "country": getattr(raw.get("country"), "alpha2", None),
    }
