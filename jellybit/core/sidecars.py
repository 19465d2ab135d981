"""External subtitle and audio names: '<video stem>[.title][.lang][.default][.forced][.sdh].ext'.

Written to be read back by Jellyfin's Emby.Naming ExternalPathParser, which splits what follows
the video's stem on '.', right to left: a slice *containing* 'default' marks the default stream,
one containing 'forced' or 'foreign' marks it forced, the first language-looking slice is the
language, 'sdh'/'cc'/'hi' mark hearing impaired ('hi' alone is Hindi), and everything else is
joined into the stream title (docs media/external-files "Naming Flags").
"""

from __future__ import annotations

import functools
import re

from jellybit.core.names import source_ext
from jellybit.core.records import PlanItem
from jellybit.core.sanitize import clean_text, sanitize_component, truncate_utf8

FLAG_ORDER = ("default", "forced", "sdh")
_FLAG_ALIASES = {
    "default": "default",
    "forced": "forced", "foreign": "forced",
    "sdh": "sdh", "cc": "sdh", "hi": "sdh", "hoh": "sdh",
    "hearingimpaired": "sdh", "hearing_impaired": "sdh", "hearing-impaired": "sdh",
}
# The parser tests these with Contains, so they must not appear anywhere in a title.
_FLAG_WORDS = re.compile("default|forced|foreign", re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z]{2,3}")
_REGION = re.compile(r"([A-Za-z]{2,3})[-_]([A-Za-z]{2}|[A-Za-z]{4}|[0-9]{3})")
_NAME = re.compile(r"[A-Za-z]{4,20}")
# English names the parser would take for a language when no language slice is to the right.
_LANGUAGE_NAMES = frozenset(
    "english russian ukrainian belarusian german french spanish italian portuguese japanese "
    "chinese korean hindi arabic turkish polish dutch swedish norwegian danish finnish czech "
    "slovak hungarian greek hebrew thai vietnamese indonesian malay romanian bulgarian serbian "
    "croatian slovenian persian latvian lithuanian estonian georgian armenian kazakh "
    "catalan basque icelandic irish welsh tagalog bengali tamil telugu urdu".split()
)


def normalize_language(value: str | None) -> str | None:
    """An ISO 639 code ('en', 'rus', 'pt-BR') or an English language name; None if unusable."""
    if not value:
        return None
    return _language(str(value))


@functools.lru_cache(maxsize=512)      # a season pack asks about the same few languages thousands of times
def _language(value: str) -> str | None:
    text = value.strip()
    if _CODE.fullmatch(text):
        code = text.lower()
        if code in ("cc", "sdh"):
            return None                          # flags, not languages
        return "hin" if code == "hi" else code   # 'hi' next to a flag would read as hearing impaired
    match = _REGION.fullmatch(text)
    if match:
        region = match[2]
        region = region.upper() if len(region) == 2 else region.title()
        return f"{match[1].lower()}-{region}"
    if _NAME.fullmatch(text) and not _FLAG_WORDS.search(text):
        return text.capitalize()
    return None


def normalize_flags(flags: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Known flags in Jellyfin's spelling and a fixed order; unknown ones are dropped."""
    if not flags:
        return ()
    return _flags(tuple(str(f) for f in flags))


@functools.lru_cache(maxsize=512)
def _flags(flags: tuple[str, ...]) -> tuple[str, ...]:
    seen = {_FLAG_ALIASES.get(f.strip().lower()) for f in flags}
    return tuple(f for f in FLAG_ORDER if f in seen)


def track_title(raw: str | None, language: str | None) -> str | None:
    """A stream title that survives the parser: one '.'-free slice that is no flag or language."""
    if not raw:
        return None
    text = _FLAG_WORDS.sub(" ", str(raw).replace(".", " "))
    text = re.sub(r"\s+", " ", clean_text(text)).strip(" -")
    if not text:
        return None
    lowered = text.casefold()
    looks_special = (
        lowered in ("sdh", "cc", "hi", "sample")
        or bool(_CODE.fullmatch(text))
        or (language in (None, "hin") and lowered in _LANGUAGE_NAMES)
    )
    return f"{text} track" if looks_special else text


def sidecar_name(host_stem: str, item: PlanItem, n: int, max_bytes: int) -> tuple[str, str | None] | None:
    """The file name of a subtitle/audio item following host_stem; n > 1 adds a disambiguating title.

    Returns (name, note) or None when no name within max_bytes keeps the host stem intact.
    """
    ext = source_ext(item.source)
    language = normalize_language(item.language)
    notes: list[str] = []
    if item.language and language is None:
        notes.append(f"language {item.language!r} not usable")
    title = track_title(item.track_title, language)
    tail = "".join(f".{part}" for part in (language, *normalize_flags(item.flags)) if part) + ext
    budget = max_bytes - len(host_stem.encode("utf-8")) - len(tail.encode("utf-8")) - 1
    # The number goes on after the cut, so a long title can never lose what makes it unique.
    room = budget - (len(f" {n}") if n > 1 else 0)
    if title:
        cut = clean_text(truncate_utf8(title, room)).strip(" -") if room > 0 else ""
        if cut != title:
            notes.append("title shortened to fit" if cut else "title dropped: name too long")
        title = cut or None
    if n > 1:
        title = f"{title} {n}" if title else f"Track {n}"
        if len(title.encode("utf-8")) > budget:
            return None
        notes.append(f"titled {title!r} to keep it apart from a same-language file")
    name = host_stem + (f".{title}" if title else "") + tail
    if len(name.encode("utf-8")) > max_bytes or sanitize_component(name) != name:
        return None
    return name, "; ".join(notes) or None
