"""Pausing Python's cyclic garbage collector while a batch builds tens of thousands of objects.

A season pack's layout allocates a plan item, a journal row and an update per file; every
700 new container objects Python runs a collection, and the older generations are walked
again and again while the batch keeps growing, so the cost grows faster than the file count.
Reference counting still frees everything a batch drops; only cycles wait until the end.
Nesting (two batches at once, a preview inside an apply) keeps it paused until the last ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (and restore it as it was after the last one)."""
    global _depth, _was_enabled
    if _depth == 0:
        _was_enabled = gc.isenabled()
        gc.disable()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _was_enabled:
            gc.enable()
