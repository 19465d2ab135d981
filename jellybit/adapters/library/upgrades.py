"""Better copies: a plan's video whose film or episode another download already laid out.

Found from the title's live links (same `(provider, provider_id)`, another download): a film's
video in the same title folder, or a video covering the same season and episode. Each such
video is *held*; what happens to it is one decision for the download, the human's choice
(the `upgrade` override: keep_both | replace | skip) or else the `layout.upgrades` policy.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jellybit.core.frozen import evolve
from jellybit.core.links import FileLink, episode_numbers
from jellybit.core.numbering import plan_film
from jellybit.core.quality import Quality, UpgradeChoice, Verdict, compare, quality_of

__all__ = ["CHOICES", "HELD", "Choice", "HeldCopy", "Verdict", "decide", "held_copy", "holders",
           "upgrade_reasons", "version_labels"]
from jellybit.core.reasons import reason
from jellybit.core.records import Plan, PlanItem, Reason, Role
from jellybit.core.release import parse_release

HELD = "held"       # plan item status: waiting for Keep both / Replace / Skip


Choice = UpgradeChoice
CHOICES = tuple(c.value for c in Choice)


@dataclass(frozen=True)
class HeldCopy:
    """One video of the plan whose work is already in the library as another download's file."""

    source: str
    old: FileLink                 # the other download's live row holding the work
    old_name: str                 # that download's name
    laid_at: str                  # when its batch laid it (RFC 3339)
    new_quality: Quality
    old_quality: Quality
    verdict: Verdict

    def describe(self) -> str:
        """The sentence a human reads: what is there, from where, since when, and how this copy compares."""
        day = self.laid_at[:10]
        words = {Verdict.BETTER: "better", Verdict.WORSE: "worse", Verdict.SAME: "no better",
                 Verdict.UNKNOWN: "not comparable by name"}[self.verdict]
        return (f"already in your library as {self.old_quality.describe()} from {self.old_name}, "
                f"laid out {day}; this copy is {self.new_quality.describe()}: {words}")


def _video_units(item: PlanItem, target: str) -> set[tuple[object, ...]]:
    """What a planned video is of its work: the film (in its folder), or (folder, season, episode)s."""
    folder = os.path.dirname(target)
    if item.season is not None and item.episodes:
        return {(folder, item.season, e) for e in item.episodes}
    if item.season is None and not item.episodes and item.part is None:
        return {(folder, "film")}
    return set()


def _link_units(link: FileLink, films: bool) -> set[tuple[object, ...]]:
    folder, name = os.path.split(link.dst_path)
    pairs = episode_numbers(name)
    if pairs:
        return {(folder, s, e) for s, e in pairs}
    return {(folder, "film")} if films and "-part" not in name.casefold() else set()


def _still_there(link: FileLink) -> bool:
    try:
        st = os.lstat(link.dst_path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_ino == link.dst_ino


def holders(plan: Plan, roots: Mapping[str, str], title_links: Sequence[FileLink],
            download_id: str, films: bool) -> dict[str, FileLink]:
    """Per video source of the plan: another download's live video of the same work, still on disk."""
    others = [link for link in title_links
              if link.download_id != download_id and link.kind == Role.VIDEO.value and link.dst_ino]
    if not others:
        return {}
    by_unit: dict[tuple[object, ...], list[FileLink]] = {}
    for link in others:
        for unit in _link_units(link, films):
            by_unit.setdefault(unit, []).append(link)
    found: dict[str, FileLink] = {}
    for item in plan.items:
        if item.role is not Role.VIDEO or not item.target or not item.library or item.library not in roots:
            continue
        target = os.path.join(roots[item.library], item.target)
        candidates = [link for unit in _video_units(item, target) for link in by_unit.get(unit, ())]
        # The one at this very path first (it is what the target collides with), then the oldest.
        candidates.sort(key=lambda link: (link.dst_path != target, link.id))
        for link in candidates:
            if _still_there(link):
                found[item.source] = link
                break
    return found


def held_copy(item: PlanItem, torrent_name: str, old: FileLink, old_name: str, laid_at: str) -> HeldCopy:
    """Compare a held video with the copy in the library (file names first, then the torrents')."""
    new_quality = quality_of(os.path.basename(item.source), item.source, torrent_name)
    # The old source is an absolute path: only its own name and its folder's speak of the release.
    old_quality = quality_of(os.path.basename(old.src_path), os.path.basename(os.path.dirname(old.src_path)),
                             old_name)
    return HeldCopy(item.source, old, old_name, laid_at, new_quality, old_quality,
                    compare(new_quality, old_quality))


def decide(policy: str, choice: str | None, copy: HeldCopy) -> str:
    """The decision for one held video: the human's choice, else the policy (HELD = ask)."""
    if choice in CHOICES:
        return choice
    if policy == "keep_both":
        return Choice.KEEP_BOTH
    if policy == "replace_if_better":
        if copy.verdict is Verdict.BETTER:
            return Choice.REPLACE
        if copy.verdict in (Verdict.WORSE, Verdict.SAME):
            return Choice.SKIP
    return HELD


def version_labels(plan: Plan, copies: Mapping[str, HeldCopy]) -> Plan:
    """The plan with a Jellyfin version label on each video kept beside its older copy.

    The label comes from the one labelling rule (`plan_film`, as for versions in one torrent),
    run over the old file and the new one; when it cannot tell them apart, the quality says it.
    """
    items = []
    for item in plan.items:
        copy = copies.get(item.source)
        if copy is None or item.role is not Role.VIDEO:
            items.append(item)
            continue
        old_item = PlanItem(copy.old.src_path, copy.old.size, Role.VIDEO)
        releases = {old_item.source: parse_release(os.path.basename(copy.old.src_path)),
                    item.source: parse_release(os.path.basename(item.source))}
        labelled = plan_film([old_item, evolve(item, version=None)], [old_item.source, item.source],
                             releases, {})
        new_label = labelled[item.source].version
        if not new_label or new_label == labelled[old_item.source].version:
            new_label = copy.new_quality.describe().split(" by ")[0] if copy.new_quality.label else None
        if not new_label or new_label == copy.old_quality.describe().split(" by ")[0]:
            new_label = copy.new_quality.describe() if copy.new_quality.group else "another copy"
        items.append(evolve(item, version=new_label))
    return Plan(items=tuple(items), folder=plan.folder)


def upgrade_reasons(copies: Mapping[str, HeldCopy], decisions: Mapping[str, str]) -> list[Reason]:
    """The reasons a preview reports: one blocking question, or notes on what the policy decided."""
    reasons: list[Reason] = []
    asked = [copies[s] for s, d in decisions.items() if d == HELD]
    if asked:
        first = asked[0]
        more = f" (and {len(asked) - 1} more)" if len(asked) > 1 else ""
        reasons.append(reason("better_copy", f"{os.path.basename(first.source)}: {first.describe()}{more}"))
    for code, wanted in (("copy_kept", Choice.KEEP_BOTH), ("copy_replaced", Choice.REPLACE),
                         ("copy_skipped", Choice.SKIP)):
        done = [copies[s] for s, d in decisions.items() if d == wanted]
        if done:
            more = f" (and {len(done) - 1} more)" if len(done) > 1 else ""
            reasons.append(reason(code, f"{os.path.basename(done[0].source)}: {done[0].describe()}{more}"))
    return reasons
