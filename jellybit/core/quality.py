"""Which of two copies of one work is better: resolution, then source, then a same-group REPACK/PROPER.

The order follows Sonarr's and Radarr's quality upgrades (docs/layout.md "Better copies"): a
quality is a resolution and a source, a higher one replaces a lower one, and within one quality
a revision (PROPER, REPACK, REPACK2) upgrades only a release of the same group. Codecs, HDR,
audio and size are not compared: they are matters of taste, and a copy that differs only there
is "the same" (a human decides, or the policy keeps both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from jellybit.core.release import Release, parse_release, plain_guessit

_RESOLUTION = re.compile(r"^(\d{3,4})([pi])$")
_REVISION = re.compile(r"(?<![a-z0-9])(repack|proper|rerip|real)(\d?)(?![a-z])", re.IGNORECASE)


class UpgradeChoice(StrEnum):
    """What to do with a copy of a film or episode the library already has (`upgrade` command)."""

    KEEP_BOTH = "keep_both"      # lay it beside the old one as a Jellyfin version
    REPLACE = "replace"          # the old library link goes (journaled, undoable); its download stays
    SKIP = "skip"                # lay nothing of it


class Verdict(StrEnum):
    """How a new copy compares with the one already in the library."""

    BETTER = "better"
    WORSE = "worse"
    SAME = "same"
    UNKNOWN = "unknown"      # a step of the order cannot be read from one of the names


# guessit's sources, best first; the label is what Jellybit shows (Sonarr's words where it has them).
_SOURCES: tuple[tuple[int, str, frozenset[str]], ...] = (
    (8, "BluRay", frozenset({"Blu-ray", "Ultra HD Blu-ray", "HD-DVD"})),
    (7, "WEB-DL", frozenset({"Web", "Video on Demand", "Digital Master"})),
    (5, "HDTV", frozenset({"HDTV", "Ultra HDTV", "Digital TV", "Satellite", "Pay-per-view"})),
    (4, "DVD", frozenset({"DVD"})),
    (3, "SDTV", frozenset({"TV", "Analog HDTV"})),
    (2, "VHS", frozenset({"VHS"})),
    (1, "Screener", frozenset({"Telecine", "Workprint"})),
    (0, "CAM", frozenset({"Camera", "HD Camera", "Telesync", "HD Telesync"})),
)
_REMUX, _WEBRIP = 9, 6


@dataclass(frozen=True)
class Quality:
    """What a release name says about its picture: resolution, source, revision and group."""

    resolution: int | None = None     # lines: 2160, 1080, 720 …; interlaced counts a little lower
    source: int | None = None         # rank in the source order (higher is better)
    label: str = ""                   # "1080p WEB-DL", "2160p Remux", "unknown quality"
    revision: int = 1                 # 1 = first release, 2 = PROPER/REPACK, 3 = REPACK2 …
    group: str | None = None
    revision_word: str = ""           # "REPACK", "PROPER", "REPACK2" as the name spells it

    def describe(self) -> str:
        """The quality in words, with the revision and group (`1080p WEB-DL REPACK by NTb`)."""
        text = self.label or "unknown quality"
        if self.revision > 1:
            text += f" {self.revision_word or 'REPACK'}"
        return text + (f" by {self.group}" if self.group else "")


def _resolution(release: Release) -> tuple[int | None, str | None]:
    match = _RESOLUTION.match(release.screen_size or "")
    if match is None:
        return None, None
    lines = int(match.group(1))
    # 1080i is worse than 1080p of the same source, better than 720p: half a step down.
    return lines * 2 - (1 if match.group(2) == "i" else 0), release.screen_size


def _source(name: str, release: Release) -> tuple[int | None, str | None]:
    guess = plain_guessit(name)
    other = guess.get("other") or []
    others = {other} if isinstance(other, str) else set(other)
    source = release.source
    if "Remux" in others:
        return _REMUX, "Remux"
    if source == "Web" and "Rip" in others:
        return _WEBRIP, "WEBRip"
    for rank, label, names in _SOURCES:
        if source in names:
            return rank, label
    return (1, "Screener") if "Screener" in others else (None, None)


def _revision(name: str) -> tuple[int, str]:
    """guessit's count of revisions (it tells The.Proper.Way from a PROPER), spelled as the name does."""
    count = plain_guessit(name).get("proper_count")
    if not isinstance(count, int) or count < 1:
        return 1, ""
    spelled = [m.group(0).upper() for m in _REVISION.finditer(name)]
    return 1 + count, spelled[-1] if spelled else "PROPER"


def quality_of(*names: str) -> Quality:
    """The quality read from a file name, its missing parts taken from the next names (the torrent's)."""
    resolution = source = None
    res_text = source_text = group = None
    revision, word = 1, ""
    for name in names:
        if not name:
            continue
        release = parse_release(name)
        if resolution is None:
            resolution, res_text = _resolution(release)
        if source is None:
            source, source_text = _source(name, release)
        group = group or release.release_group
        found, spelled = _revision(name)
        if found > revision:
            revision, word = found, spelled
    label = " ".join(p for p in (res_text, source_text) if p)
    return Quality(resolution, source, label, revision, group, word)


def compare(new: Quality, old: Quality) -> Verdict:
    """The new copy against the old one: resolution, then source, then a same-group revision."""
    for mine, theirs in ((new.resolution, old.resolution), (new.source, old.source)):
        if mine is None or theirs is None:
            return Verdict.UNKNOWN
        if mine != theirs:
            return Verdict.BETTER if mine > theirs else Verdict.WORSE
    same_group = bool(new.group and old.group and new.group.casefold() == old.group.casefold())
    if same_group and new.revision != old.revision:
        return Verdict.BETTER if new.revision > old.revision else Verdict.WORSE
    return Verdict.SAME
