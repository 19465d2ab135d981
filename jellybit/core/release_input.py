"""What guessit may read of a release name: bounded, normalized text, and a bounded amount of work.

A torrent's name and its file paths are attacker-controlled. guessit's work grows faster than the
length of its input: every path component is a marker its rules sort matches against, so a
400-character name of short repeated units (`" /  / S01"` × 44, `"/E1/E2/E3…"`) costs it seconds to
minutes. So guessit reads a path's file name and only its nearest folders, every component cut to
what a file system allows, with runs of separators and repeated units collapsed; and, as a hard
stop for what that does not foresee, each reading may make at most `CALL_BUDGET` Python calls
(counted, not timed, so the same name always reads the same on a busy machine).
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

MAX_PARSE_CHARS = 400          # at most this much of a name is read: the file name and its nearest folders
MAX_COMPONENT_CHARS = 255      # one path component (a file system's limit for one name)
MAX_FOLDERS = 3                # folders read above the file name
MAX_ALIAS_PARTS = 6            # `A / B / C …` titles: parts of one component read
CALL_BUDGET = 1_000_000        # Python calls one guessit reading may make (real names: ≤ 400,000)
PACK_CALL_BUDGET = 50_000_000  # Python calls guessit may make for one pack of names (`parse_many`)
_MAX_RAW_CHARS = 8_192         # a longer name is cut before anything else looks at it (PATH_MAX is 4,096)

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")
# A `/` with a space on both sides separates titles (`Фарго / Fargo`); any other `/` separates folders.
PATH_SLASH = re.compile(r"(?<! )/|/(?! )")
_ALIAS_SLASH = re.compile(r" / ")
# A `/` inside one pair of brackets is no folder: `[中文标题/English Title]` separates titles,
# `(2023/S02E03/WEB-DL/1080p)` packs tags (three or more; `(1/7)` is a count).
_BRACKETED_SLASH = re.compile(r"[\[【［]([^\[\]【】［］/]*(?:/[^\[\]【】［］/]*)+)[\]】］]")
_PACKED_SLASH = re.compile(r"\(([^()\s/]+(?:/[^()\s/]+){2,})\)")
# A unit of 1–30 characters repeated four times or more in a row; collapsed when it holds a
# separator (`S01 S01 S01 S01`, `/E1/E1/E1/E1`, `.-.-.-.-`), so words (`Zzzz`) and three repeats
# (`Tora! Tora! Tora!`) stay.
_REPEATED = re.compile(r"(.{1,30}?)\1{3,}")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{2,4}$")
# In a release name a `/` is the title's (`Fate/stay night`, `Ranma 1/2`, `22/7`), never a folder: it is
# handed to guessit as a division slash, which guessit keeps inside a title, and given back as `/`.
NAME_SLASH = "\u2215"
# A name with a leading fansub group and no file extension is a release name, not a path (`[VCB-Studio]
# Fate/stay night [BDRip 1080p]`); a torrent's files always end in one.
_GROUP_LED = re.compile(r"^\s*[\[【［][^\]】］/]+[\]】］]")


_spent = threading.local()


class BudgetExceeded(BaseException):
    """A reading made more calls than its budget (a BaseException: no handler inside guessit swallows it)."""


def _collapse(text: str) -> str:
    return _REPEATED.sub(lambda m: m.group(1) if re.search(r"\W", m.group(1)) else m.group(0), text)


def _component(text: str) -> str:
    """One path component: repeats collapsed, at most `MAX_ALIAS_PARTS` titles, cut to a file name's size."""
    parts = [p for p in (part.strip() for part in _collapse(text).split("/")) if p]
    text = _collapse(" / ".join(parts[:MAX_ALIAS_PARTS]))     # `0 / 0 / / 0 / 0`: a run again once joined
    if len(text) <= MAX_COMPONENT_CHARS:
        return text
    extension = _EXTENSION.search(text)
    tail = extension.group(0) if extension else ""
    return text[: MAX_COMPONENT_CHARS - len(tail)].rstrip() + tail


def is_path(text: str) -> bool:
    """Whether a name with no caller's word on it reads as a path: it has a folder slash, and is not a
    fansub group's release name (a leading `[Group]` and no file extension)."""
    return bool(PATH_SLASH.search(text)) and not (_GROUP_LED.match(text) and not _EXTENSION.search(text))


def parse_text(name: str, path: bool | None = None) -> str:
    """The text the parser reads for a name: control characters and repeats dropped, a path kept to its
    file name and as many of its nearest folders as fit in `MAX_PARSE_CHARS` (at most `MAX_FOLDERS`).

    `path`: True for a file's path, False for a release name (a torrent's name: every `/` in it is the
    title's, `NAME_SLASH` in the text), None to tell by its shape (`is_path`)."""
    text = str(name)
    if len(text) > _MAX_RAW_CHARS:
        # a path's end holds its file name, any other name's start its title
        text = text[-_MAX_RAW_CHARS:] if PATH_SLASH.search(text) else text[:_MAX_RAW_CHARS]
    text = " ".join(_CONTROL.sub(" ", text).replace("\\", "/").split())
    text = _BRACKETED_SLASH.sub(lambda m: m.group(0).replace("/", " / ").replace("  ", " "), text)
    text = _PACKED_SLASH.sub(lambda m: f"({m.group(1).replace('/', ' ')})", text)
    if not (path if path is not None else is_path(text)):
        text = PATH_SLASH.sub(NAME_SLASH, text)
    components = [c for c in (_component(part) for part in PATH_SLASH.split(_collapse(text))) if c]
    if not components:
        return ""
    kept = [components[-1]]
    for folder in reversed(components[:-1]):
        if len(kept) > MAX_FOLDERS or sum(map(len, kept)) + len(kept) + len(folder) > MAX_PARSE_CHARS:
            break
        kept.insert(0, folder)
    return "/".join(kept)


def run_bounded(function: Callable[[], T], budget: int = CALL_BUDGET) -> T:
    """Call `function`, raising `BudgetExceeded` inside it once it has made `budget` Python calls.

    The count is kept by a trace function of this thread only (another trace function, a debugger's
    or coverage's, keeps running inside it), and it is restored afterwards.
    """
    left = budget
    outer = sys.gettrace()

    def count(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal left
        left -= 1
        if left < 0:
            raise BudgetExceeded
        return outer(frame, event, arg) if outer is not None else None

    sys.settrace(count)
    try:
        return function()
    finally:
        sys.settrace(outer)
        _spent.calls = calls_spent() + budget - max(left, 0)


def calls_spent() -> int:
    """Python calls every bounded reading of this thread has made so far (a pack's budget is kept by it)."""
    return int(getattr(_spent, "calls", 0))
