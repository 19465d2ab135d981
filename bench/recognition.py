"""Recognition time without the LLM's (or any network's) latency, for packs of 10, 500 and 2,000 files.

The metadata provider is an in-process stand-in that answers at once, so the time measured is
Jellybit's own: classification, parsing (guessit), matching, planning and confidence.
Run: .venv/bin/python bench/recognition.py
"""

from __future__ import annotations

import asyncio
import time

from jellybit import ident
from jellybit.config import RecognitionConfig
from jellybit.core.models import Download
from jellybit.core.ports import MetadataQuery, RecognitionRequest
from jellybit.core.records import Candidate, MediaType, SourceFile
from jellybit.core.release import parse_release
from jellybit.core.states import State
from jellybit.engine.recognizer import RecognitionEngine

GB = 1024**3
SEASONS = {str(s): 50 for s in range(1, 41)}


class InstantProvider:
    """A MetadataProvider that knows one long-running show."""

    name = "tvdb"

    async def search(self, query: MetadataQuery) -> list[Candidate]:
        return [Candidate("tvdb", "1", MediaType.SERIES, "Show", 2001)]

    async def details(self, media_type: str, provider_id: str) -> Candidate:
        return Candidate("tvdb", "1", MediaType.SERIES, "Show", 2001, details={"seasons": SEASONS})


def season_pack(count: int) -> list[SourceFile]:
    """Videos with a subtitle each in per-episode folders, plus screenshots, as prompt_size.py uses."""
    files: list[SourceFile] = []
    season = 0
    while len(files) < count:
        season += 1
        folder = f"Show.Complete.1080p/Season {season:02d}"
        for e in range(1, 51):
            files.append(SourceFile(f"{folder}/Show.S{season:02d}E{e:02d}.1080p.WEB-DL.mkv", int(1.2 * GB)))
            subs = f"{folder}/Subs/Show.S{season:02d}E{e:02d}.1080p.WEB-DL/2_English.srt"
            files.append(SourceFile(subs, 40_000))
            files.append(SourceFile(f"{folder}/Screens/shot{season}-{e}.jpg", 200_000))
    return files[:count]


def anime_pack(count: int) -> list[SourceFile]:
    """Absolute numbering: `[Group] Show - 1071 (1080p) [CRC].mkv`."""
    return [SourceFile(f"[Grp] Show (1080p)/[Grp] Show - {n:03d} (1080p) [{n:08X}].mkv", GB)
            for n in range(1, count + 1)]


async def measure(files: list[SourceFile], name: str) -> tuple[float, int]:
    parse_release.cache_clear()
    recognizer = RecognitionEngine(llm=None, providers=[InstantProvider()], config=RecognitionConfig())
    download = Download(ident.new_id(), "magnet", "magnet:?", name, "", State.RECOGNIZING, "t", "", "")
    started = time.perf_counter()
    draft = await recognizer.recognize(RecognitionRequest(download=download, files=tuple(files)))
    elapsed = time.perf_counter() - started
    return elapsed, sum(1 for v in draft.plan.videos() if v.episodes)


async def main() -> None:
    print(f"{'pack':<14}{'files':>7}{'videos numbered':>17}{'seconds':>10}")
    for count in (10, 500, 2000):
        for label, build in (("season pack", season_pack), ("anime", anime_pack)):
            seconds, numbered = await measure(build(count), "Show.Complete.1080p")
            print(f"{label:<14}{count:>7}{numbered:>17}{seconds:>10.3f}")


if __name__ == "__main__":
    asyncio.run(main())
