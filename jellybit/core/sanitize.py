"""Path component sanitization: untrusted text in, one safe file or folder name out (pure)."""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import PurePath

MAX_COMPONENT_BYTES = 255          # NAME_MAX on ext4, btrfs, xfs, zfs and SMB

# Characters Jellyfin documents as breaking things, plus both separators. Each maps to a
# readable stand-in rather than vanishing, so "AC/DC" stays recognisable as "AC-DC".
_REPLACE = {
    "/": "-",
    "\\": "-",
    "|": "-",
    "<": "",
    ">": "",
    '"': "'",
    "?": "",
    "*": "",
}
# Windows device names are reserved with any extension ("nul.srt" too); SMB clients choke on them.
_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"COM{n}" for n in "123456789¹²³"}
    | {f"LPT{n}" for n in "123456789¹²³"}
)
_ASCII_TABLE = str.maketrans(_REPLACE)
_SPACES = re.compile(r"\s+")
_COLON_SPACE = re.compile(r"\s*:\s+")
# What makes _once change printable ASCII: a forbidden character or ':', a run of spaces,
# a leading space or dot, a trailing space or dot (length and device names are checked apart).
_ASCII_DIRTY = re.compile(r'[:/\\|<>"?*]|  |^[ .]|[ .]\Z')


def _is_noncharacter(cp: int) -> bool:
    return 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE


def _clean_chars(text: str) -> str:
    """NFC, drop control/format/surrogate characters, map forbidden ones, collapse whitespace."""
    if text.isascii() and text.isprintable():
        # Fast path (most names): printable ASCII is already NFC and has no controls.
        text = _COLON_SPACE.sub(" - ", text).replace(":", "-")
        return _SPACES.sub(" ", text.translate(_ASCII_TABLE))
    text = unicodedata.normalize("NFC", text)
    # "Mission: Impossible" reads best as "Mission - Impossible"; a bare "10:30" as "10-30".
    text = _COLON_SPACE.sub(" - ", text).replace(":", "-")
    out: list[str] = []
    for ch in text:
        if ch in _REPLACE:
            out.append(_REPLACE[ch])
            continue
        cat = unicodedata.category(ch)
        if ch.isspace() or cat in ("Zs", "Zl", "Zp"):
            out.append(" ")
        elif cat in ("Cc", "Cf", "Cs") or _is_noncharacter(ord(ch)):
            # Cc: C0/C1 controls and NUL; Cf: bidi overrides/isolates, zero-width characters, BOM.
            continue
        else:
            out.append(ch)
    # Removing a character can leave a new composable pair behind: normalize again.
    return unicodedata.normalize("NFC", _SPACES.sub(" ", "".join(out)))


def _trim(text: str) -> str:
    """Strip leading spaces and dots (hidden files, '.', '..') and trailing dots and spaces."""
    return text.lstrip(" .").rstrip(" .")


def truncate_utf8(text: str, max_bytes: int) -> str:
    """Cut text to at most max_bytes of UTF-8 without splitting a character."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[: max(max_bytes, 0)].decode("utf-8", errors="ignore")


def _unreserve(text: str) -> str:
    """Append '_' to a Windows device name, with or without extension ('NUL.srt' -> 'NUL_.srt')."""
    base, dot, rest = text.partition(".")
    if base.rstrip(" ").upper() in _RESERVED:
        return f"{base.rstrip(' ')}_{dot}{rest}"
    return text


def _once(text: str, max_bytes: int) -> str:
    text = _trim(_clean_chars(text))
    text = _trim(truncate_utf8(text, max_bytes))
    text = _unreserve(text)
    return _trim(truncate_utf8(text, max_bytes))


def clean_text(text: str, max_bytes: int = MAX_COMPONENT_BYTES) -> str:
    """What sanitize_component makes of text, but '' (not a fallback) when nothing is left."""
    return _settle(str(text), max_bytes)


def sanitize_component(text: str, *, fallback: str = "_") -> str:
    """Turn any text into one safe, non-empty path component of at most 255 UTF-8 bytes."""
    return _settle(str(text), MAX_COMPONENT_BYTES) or _settle(str(fallback), MAX_COMPONENT_BYTES) or "_"


def _clean_ascii(text: str, max_bytes: int) -> bool:
    """Tell, without a pass, that text is printable ASCII which _once would return unchanged."""
    if not (text.isascii() and text.isprintable() and len(text) <= max_bytes) or _ASCII_DIRTY.search(text):
        return False
    # Device names are at most 7 characters; a longer head could only hide one behind a run of
    # spaces, which the pattern above already refused.
    dot = text.find(".")
    head = text if dot < 0 else text[:dot]
    return len(head) > 8 or head.rstrip(" ").upper() not in _RESERVED


def _settle(text: str, max_bytes: int) -> str:
    # Most names (and every name the gate re-checks) are clean ASCII already: one quick look.
    if _clean_ascii(text, max_bytes):
        return text
    return _settle_passes(text, max_bytes)


def _settle_passes(text: str, max_bytes: int) -> str:
    # Each pass can only shorten or fix the text; a few passes reach the fixed point, which
    # makes sanitize_component idempotent (the containment gate relies on that).
    for _ in range(6):
        nxt = _once(text, max_bytes)
        if nxt == text:
            return nxt
        text = nxt
    return text


@functools.lru_cache(maxsize=256)      # the same few extensions, thousands of times a batch
def _clean_ext(ext: str) -> str:
    """An extension ('.mkv', '.en.forced.srt') cleaned like a component but keeping its dot."""
    body = _clean_chars(ext).strip(" .")
    return f".{body}" if body else ""


def sanitize_filename(stem: str, ext: str = "", *, fallback: str = "_") -> str:
    """Sanitize stem + ext as one component, truncating the stem (not the extension) to fit."""
    clean_ext = truncate_utf8(_clean_ext(ext), MAX_COMPONENT_BYTES // 2)
    budget = MAX_COMPONENT_BYTES - len(clean_ext.encode("utf-8"))
    clean_stem = _settle(str(stem), budget) or _settle(str(fallback), budget) or "_"
    return sanitize_component(clean_stem + clean_ext, fallback=fallback)


def is_sanitized(component: str) -> bool:
    """Tell whether a component is already exactly what sanitize_component makes of it."""
    if component and _clean_ascii(component, MAX_COMPONENT_BYTES):
        return True         # what _settle would see first: unchanged by a pass, so its own fixed point
    return bool(component) and sanitize_component(component) == component


def is_within(root: PurePath, path: PurePath, *, or_equal: bool = False) -> bool:
    """Lexically tell whether path lies below root, whole components only (no '..' anywhere).

    The one "is this path inside that root?" check: the library wing asks it of real paths
    (after `realpath`), the store and the path map of recorded ones. `or_equal` lets the root
    itself count as inside.
    """
    if root.is_absolute() != path.is_absolute():
        return False
    if ".." in root.parts or ".." in path.parts:
        return False
    if path == root:
        return or_equal
    return path.is_relative_to(root)
