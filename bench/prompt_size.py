"""Prompt size for packs of 10, 500 and 2,000 files: characters and a tokenizer-free token estimate.

Run: .venv/bin/python bench/prompt_size.py
"""

from __future__ import annotations

import hashlib
import time

from jellybit.core.ports import LlmQuestion, PromptFile
from jellybit.core.prompt import build_prompt, estimate_tokens

GB = 1024**3


def season_pack(count: int) -> list[PromptFile]:
    """A long-running show: videos, two subtitles per episode in per-episode folders, some junk."""
    files: list[PromptFile] = []
    per_season = 50
    season = 0
    while len(files) < count:
        season += 1
        folder = f"Show.Complete.1080p/Season {season:02d}"
        for e in range(1, per_season + 1):
            files.append(PromptFile(f"{folder}/Show.S{season:02d}E{e:02d}.1080p.WEB-DL.mkv", int(1.2 * GB),
                                    "video"))
            files.append(PromptFile(f"{folder}/Subs/Show.S{season:02d}E{e:02d}/2_English.srt", 40_000,
                                    "subtitle"))
            files.append(PromptFile(f"{folder}/Screens/{hashlib.md5(f'{season}.{e}'.encode()).hexdigest()}.jpg",
                                    200_000, "ignored"))
    return files[:count]


def unrelated(count: int) -> list[PromptFile]:
    """The worst case: names that share no pattern at all."""
    return [PromptFile(f"{hashlib.sha256(str(i).encode()).hexdigest()[:40]}.mkv", GB, "video")
            for i in range(count)]


def main() -> None:
    """Print one line per pack shape and size."""
    print(f"{'pack':<12} {'files':>6} {'chars':>7} {'~tokens':>8} {'lines':>6} {'ms':>7}")
    for shape, make in (("season pack", season_pack), ("unrelated", unrelated)):
        for count in (10, 500, 2_000):
            question = LlmQuestion(name="Show.Complete.1080p", context="полный сериал",
                                   files=tuple(make(count)), hints=("all seasons",), parsed={"title": "Show"})
            start = time.perf_counter()
            prompt = build_prompt(question, max_files=300)
            elapsed = (time.perf_counter() - start) * 1000
            lines = len(prompt.listing.lines) + len(prompt.listing.summaries)
            tokens = estimate_tokens(prompt.system + prompt.user)
            print(f"{shape:<12} {count:>6} {prompt.chars():>7} {tokens:>8} {lines:>6} {elapsed:>7.1f}")


if __name__ == "__main__":
    main()
