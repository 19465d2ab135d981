"""The layouter's memory of its last previews, so an apply right after one does not compute it again.

The pipeline previews a recognition (naming, folder convergence, one `lstat` per source and
target), stores it, and lays it out a moment later under the same download lock. A preview is
reused only when nothing it depends on can have changed in between:

- the recognition being applied carries exactly the previewed plan, and the same title, year,
  type and provider id; the download's save and content paths are the same;
- no layout operation ran since (`generation`: every apply, undo, relink, recovery and title
  delete moves it), so the journal rows convergence and copies were read from are unchanged;
- the download had no live links of its own when previewed (its current recognition moves to
  the new one when stored, which could change what convergence sees);
- it is at most `max_age` seconds old.

What the disk could change meanwhile is proven again by the journal while it lays each row:
the folder of every target by the containment gate (an `lstat` walk, per chunk), the source's
journaled inode by the one `lstat` after each link, and the target's absence by `link(2)`
itself, which never replaces a file (a file that appeared is a collision and the batch rolls
back). Only a few previews are kept; each holds one plan.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from jellybit.adapters.library.disk import Inspection
from jellybit.core.models import Download
from jellybit.core.records import Reason, RecognitionDraft

MAX_AGE = 60.0
KEEP = 4


def _key(download: Download, recognition: RecognitionDraft) -> tuple[object, ...]:
    return (download.save_path, download.content_path, recognition.media_type, recognition.title,
            recognition.year, recognition.provider, recognition.provider_id, recognition.original_title)


@dataclass(frozen=True)
class Previewed:
    """One remembered preview."""

    key: tuple[object, ...]
    generation: int
    inspection: Inspection
    reasons: tuple[Reason, ...]
    at: float


class PreviewMemory:
    """The last few previews by download id, and the generation of the layouter's writes."""

    def __init__(self, *, max_age: float = MAX_AGE, keep: int = KEEP,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age = max_age
        self.keep = max(1, keep)
        self._clock = clock
        self._entries: OrderedDict[str, Previewed] = OrderedDict()
        self.generation = 0
        self.reused = 0           # applies that took a preview's work (for tests and benchmarks)

    def changed(self) -> None:
        """A layout operation wrote to the journal or the libraries: every preview is stale now."""
        self.generation += 1
        self._entries.clear()

    def remember(self, download: Download, recognition: RecognitionDraft, generation: int,
                 inspection: Inspection, reasons: tuple[Reason, ...]) -> None:
        """Keep a preview computed while `generation` was current."""
        if generation != self.generation:
            return
        self._entries[download.id] = Previewed(_key(download, recognition), generation, inspection, reasons,
                                               self._clock())
        self._entries.move_to_end(download.id)
        while len(self._entries) > self.keep:
            self._entries.popitem(last=False)

    def take(self, download: Download, recognition: RecognitionDraft) -> Previewed | None:
        """The preview of exactly this recognition if it is still good (forgotten either way)."""
        entry = self._entries.pop(download.id, None)
        if (entry is None or entry.generation != self.generation
                or self._clock() - entry.at > self.max_age
                or entry.key != _key(download, recognition)):
            return None
        previewed = entry.inspection.plan
        if recognition.plan is not previewed and recognition.plan != previewed:
            return None
        self.reused += 1
        return entry

    def __len__(self) -> int:
        return len(self._entries)
