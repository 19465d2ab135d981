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
_NON_LATIN = re.compile(r"[^\W\d_A-Za-z\u00c0-\u024f]")
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


def episode_marked(base: str, number: int) -> bool:
    digits = rf"(?<!\d)0*{number}(?!\d)"
    pattern = rf"{_EPISODE_BEFORE}{digits}|{digits}{_EPISODE_AFTER}"
    if 1 <= number <= len(_ROMAN):
        pattern += rf"|(?<![a-z])part[ ._-]*{_ROMAN[number - 1]}(?![a-z])"
    return bool(re.search(f"(?i){pattern}", base))


FANSUB_STYLE = re.compile(r"^\s*[\[(【]|[\[(][0-9A-Fa-f]{8}[\])]|^[^ .]*_[^ .]*_")

BESIDE = re.compile(r"(?i)(?:s\d{1,4}e\d{1,4}(?:-?e?\d{1,4})*|\d{1,2}x\d{1,3}(?:-\d{1,3})*)")
