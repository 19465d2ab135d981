"""The SubtitleSampler port: read the head of subtitle files under downloads and detect their language.

Only reads, never writes, and only a bounded head of each file: it is opened with O_NOFOLLOW
and O_NONBLOCK (a symlink or a FIFO planted in a torrent is refused, never followed or waited
on), checked to be a regular file, and read up to HEAD_BYTES. Where a source lies on disk comes
from the engine's `Sources.path` (injected by app.py as `locate`), which refuses any path outside
the downloads root. Decoding and markup stripping are `core/subtitle_text`; the detector is
`adapters/language_id`. Nothing here raises for one bad file: its sample carries the problem.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from jellybit.adapters.language_id import CONFIDENCE, GUESSED_CONFIDENCE, LanguageIdentifier
from jellybit.core.models import Download
from jellybit.core.ports import SubtitleSample
from jellybit.core.subtitle_text import cue_stats, cue_texts, decode_head
from jellybit.errors import JellybitError
from jellybit.logs import for_download

log = logging.getLogger(__name__)

HEAD_BYTES = 16 * 1024       # enough for an ASS header and dozens of cues; a 10 MB file costs the same
Locate = Callable[[Download], Callable[[str], Path]]
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC


def read_head(path: Path, limit: int = HEAD_BYTES) -> tuple[bytes, bool]:
    """The first `limit` bytes of a regular file and whether that is all of it; OSError otherwise."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "the file is a symbolic link") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data, len(data) >= info.st_size
    finally:
        os.close(fd)


def sample_bytes(data: bytes, complete: bool, identifier: LanguageIdentifier) -> SubtitleSample:
    """Decode, strip and detect one file head; AdapterError only if the detector itself is broken."""
    decoded = decode_head(data, complete=complete)
    if decoded is None:
        problem = "the file is empty" if not data else "not text in a known encoding (binary, or a legacy "\
            "encoding such as GBK or Shift-JIS)"
        return SubtitleSample(problem=problem)
    cues = cue_texts(decoded.text)
    stats = cue_stats(cues)
    found = identifier.detect("\n".join(cues))
    bar = GUESSED_CONFIDENCE if decoded.guessed else CONFIDENCE
    sample = SubtitleSample(confidence=found.confidence, encoding=decoded.encoding, cues=stats.cues,
                            sdh_cues=stats.sdh_cues, sdh=stats.sdh)
    if found.language is None:
        return replace(sample, problem=f"too little text to tell its language ({stats.cues} cue(s))")
    if found.confidence < bar:
        return replace(sample, problem=f"the text reads most like '{found.language}', but only with "
                     f"confidence {found.confidence:.2f} (needs {bar:.2f})")
    if not decoded.plausible(found.language):
        return replace(sample, problem=f"'{found.language}' cannot be written in {decoded.encoding}; "
                     "the encoding was misread")
    return replace(sample, language=found.language)


class FileSubtitleSampler:
    """Implements SubtitleSampler over the local disk (run in a worker thread: file reads and the model)."""

    def __init__(self, locate: Locate, *, identifier: LanguageIdentifier | None = None,
                 head_bytes: int = HEAD_BYTES) -> None:
        self._locate = locate
        self._identifier = identifier or LanguageIdentifier()
        self._head_bytes = head_bytes

    async def sample(self, download: Download, sources: Sequence[str]) -> Mapping[str, SubtitleSample]:
        """One sample per source; a file that cannot be read gets a sample with its problem."""
        return await asyncio.to_thread(self._sample_all, download, list(sources))

    def _sample_all(self, download: Download, sources: list[str]) -> dict[str, SubtitleSample]:
        path_of = self._locate(download)
        out: dict[str, SubtitleSample] = {}
        for source in sources:
            try:
                data, complete = read_head(path_of(source), self._head_bytes)
                out[source] = sample_bytes(data, complete, self._identifier)
            except JellybitError as exc:
                out[source] = SubtitleSample(problem=exc.message[:300])
            except OSError as exc:
                out[source] = SubtitleSample(problem=f"cannot read it: {exc.strerror or exc}"[:300])
        found = sum(1 for s in out.values() if s.language)
        log.info("subtitle languages read from text: %d of %d file(s)", found, len(sources),
                 **for_download(download.id))
        return out
