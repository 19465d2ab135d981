"""What a chat message says, read without I/O: its torrent sources, its context, a command, a button.

Every input here is untrusted text from Telegram (message text, captions, hidden link targets,
callback data that a modified client can forge). Nothing here decides whether a source is
valid: the engine's ingest does that and answers with a clear error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

MAX_SOURCES = 20                 # per message; more is refused as a whole
_MAGNET = re.compile(r"magnet:\?[^\s<>\"'`]+", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_HASH = re.compile(r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{64}|[0-9A-Fa-f]{40})(?![0-9A-Za-z])")
_TRAILING = ".,;:!?»\"'”’…"
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}
_EDGE = " \t-–—:|,;·•"
_SPACE_BEFORE_STOP = re.compile(r"\s+([.,;:!?)\]])")
_COMMAND = re.compile(r"^/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{1,64}))?(?:\s+(.*))?$", re.DOTALL)
_ULID = re.compile(r"[0-9a-hjkmnp-tv-z]{26}")


@dataclass(frozen=True)
class Ingestible:
    """The torrent sources a message names (in order, each once) and the rest of its text."""

    sources: tuple[str, ...]
    context: str


def _trim(candidate: str) -> str:
    """Drop punctuation that ends the sentence rather than the link, and an unmatched closer."""
    while candidate:
        last = candidate[-1]
        if last in _TRAILING:
            candidate = candidate[:-1]
        elif last in _PAIRS and candidate.count(_PAIRS[last]) < candidate.count(last):
            candidate = candidate[:-1]
        else:
            break
    return candidate


def is_torrent_url(url: str) -> bool:
    """Tell whether an http(s) URL points at a .torrent file (by its path)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and parts.path.lower().endswith(".torrent")


def _spans(text: str) -> list[tuple[int, int, str, bool]]:
    """Magnets and URLs in the text: (start, end, link, is a source), in order, not overlapping."""
    found: list[tuple[int, int, str, bool]] = []
    taken: list[tuple[int, int]] = []
    for pattern in (_MAGNET, _URL):
        for match in pattern.finditer(text):
            link = _trim(match.group(0))
            start, end = match.start(), match.start() + len(link)
            if not link or any(s < end and start < e for s, e in taken):
                continue
            is_source = pattern is _MAGNET or is_torrent_url(link)
            found.append((start, end, link, is_source))
            taken.append((start, end))
    return sorted(found)


def _clean_context(text: str) -> str:
    lines = (_SPACE_BEFORE_STOP.sub(r"\1", " ".join(line.split())).strip(_EDGE) for line in text.splitlines())
    return "\n".join(line for line in lines if line).strip(_EDGE + "\n")


def extract(text: str, links: Iterable[str] = ()) -> Ingestible:
    """Find magnets, http(s) links to a .torrent and bare infohashes; the remaining text is the context.

    `links` are the targets of hidden links (Telegram's `text_link` entities): the ones that
    are magnets or .torrent URLs are sources too, and their visible words stay in the context.
    Other URLs are not sources and stay in the context as they are.
    """
    text = text or ""
    found: list[tuple[int, int, str]] = []       # (start, end, source) spans to cut from the text
    masked = list(text)
    for start, end, link, is_source in _spans(text):
        masked[start:end] = " " * (end - start)   # a hash inside any link is not a bare hash
        if is_source:
            found.append((start, end, link))
    for match in _HASH.finditer("".join(masked)):
        found.append((match.start(), match.end(), match.group(0).lower()))
    found.sort()
    sources = [source for _, _, source in found]
    pieces, cursor = [], 0
    for start, end, _ in found:
        pieces.append(text[cursor:start])
        cursor = end
    pieces.append(text[cursor:])
    rest = " ".join(pieces) if len(pieces) > 1 else pieces[0]
    for link in links:
        link = (link or "").strip()
        if link[:8].lower() == "magnet:?" or is_torrent_url(link):
            sources.append(link)
    unique = tuple(dict.fromkeys(sources))
    return Ingestible(unique, _clean_context(rest))


@dataclass(frozen=True)
class BotCommand:
    """A `/command` with its argument text."""

    name: str
    args: str


def parse_command(text: str, bot_username: str | None = None) -> BotCommand | None:
    """Read `/name@bot args`; None when the text is not a command or is addressed to another bot."""
    match = _COMMAND.match((text or "").strip())
    if match is None:
        return None
    name, addressee, args = match.groups()
    if addressee and bot_username and addressee.lower() != bot_username.lower():
        return None
    return BotCommand(name.lower(), (args or "").strip())


class Action(StrEnum):
    """What an inline button does; the value is its code in the callback data."""

    APPLY = "a"
    CANDIDATE = "c"        # apply with this metadata candidate
    REJECT = "r"
    DEFER = "d"
    RETRY = "t"
    UNDO_ASK = "u"         # asks for confirmation in a new message
    UNDO = "U"             # confirmed
    UNDO_KEEP = "n"        # not confirmed
    KEEP_BOTH = "k"        # better copy: a Jellyfin version beside the library's copy
    REPLACE = "p"          # better copy: the library's copy is replaced (undo brings it back)
    SKIP = "s"             # better copy: lay nothing of it


@dataclass(frozen=True)
class Press:
    """A decoded button press: the action, the download and (for CANDIDATE) the candidate."""

    action: Action
    download_id: str
    candidate_id: str | None = None


def encode_press(press: Press) -> str:
    """The callback data of a button (at most 55 bytes, under Telegram's 64)."""
    parts = [press.action.value, press.download_id]
    if press.candidate_id is not None:
        parts.append(press.candidate_id)
    return ":".join(parts)


def decode_press(data: str | None) -> Press | None:
    """Read callback data back; None for anything this bot did not write (forged or old data)."""
    if not data or len(data) > 64:
        return None
    parts = data.split(":")
    try:
        action = Action(parts[0])
    except ValueError:
        return None
    ids = parts[1:]
    expected = 2 if action is Action.CANDIDATE else 1
    if len(ids) != expected or not all(_ULID.fullmatch(i) for i in ids):
        return None
    return Press(action, ids[0], ids[1] if expected == 2 else None)
