"""Corrections that drop numbers guessit takes for episodes beside a marked episode: a title's number, a
part count of a Usenet post."""

from __future__ import annotations

import re

from jellybit.core.release_fixes.common import Guess, Reading, base_name, note

# An episode the name marks: `S02E05`, `2x05`, `E10`, `Ep07`, `Episode 7`.
_MARKED = re.compile(r"(?i)(?:s\d{1,4}[ ._-]?e|(?<![a-z\d])\d{1,2}x|(?<![a-z])e|(?<![a-z])ep[ ._]?|"
                     r"episode[ ._]?)(\d{1,4})(?!\d)")
_SEASON_OR_EPISODE = re.compile(r"(?i)(?<![a-z])(?:s\d{1,4}(?![a-z])|s\d{1,4}[ ._-]?e\d|(?<!\d)\d{1,2}x\d{2}|"
                                r"e\d{1,4}(?!\d)|ep[ ._]?\d|episode|season)")
# `….mkv.-.01.of.10`, `….par2.-.02.of.11.(1/1)`: a post split in parts numbers its parts.
_PART_COUNT = re.compile(r"(?i)(?<!\d)0*(\d{1,3})[ ._]*of[ ._]*\d{1,3}(?!\d)")


def _present(number: int, text: str) -> bool:
    return bool(re.search(rf"(?<!\d)0*{number}(?!\d)", text))


def fix_title_episode(r: Reading, guess: Guess) -> None:
    """`Mobile_Suit_Gundam_00_Season_2_Ep07`, `Mob.Psycho.100.II.E10`: the title's number read as one more
    episode (0 or 100) beside the marked one → dropped, and kept in the title."""
    episodes = r["episodes"]
    if len(episodes) < 2 or not r["seasons"]:
        return
    base = base_name(r["text"])
    first = _SEASON_OR_EPISODE.search(base)
    marked = {int(m.group(1)) for m in _MARKED.finditer(base)}
    if not first or not marked:
        return
    head, tail = base[: first.start()], base[first.start():]
    extra = [e for e in episodes if e not in marked]
    if len(extra) == len(episodes):
        return
    # `Mob.Psycho.100`: guessit's S01E00 from the title's 100
    fused = {e for e in extra for s in r["seasons"] if re.search(rf"(?<!\d){s}{e:02d}(?!\d)", head)}
    if not extra or not all((_present(e, head) or e in fused) and not _present(e, tail) for e in extra):
        return
    r["episodes"] = [e for e in episodes if e in marked]
    title = " ".join(re.sub(r"[._]", " ", head).split()).strip(" -")
    if title and r["title"] and title.startswith(r["title"]):
        r["title"] = title
    note(r, "title_episode")


def fix_part_count(r: Reading, guess: Guess) -> None:
    """`Show.S01E08.720p.mkv.-.01.of.10`: a post's part number after an S/E marker is not an episode."""
    episodes = r["episodes"]
    if len(episodes) < 2:
        return
    base = r["text"]
    marked = {int(m.group(1)) for m in _MARKED.finditer(base)}
    counted = {int(m.group(1)) for m in _PART_COUNT.finditer(base)}
    extra = [e for e in episodes if e not in marked]
    if not marked or not extra or len(extra) == len(episodes) or not set(extra) <= counted:
        return
    r["episodes"] = [e for e in episodes if e in marked]
    note(r, "part_count")
