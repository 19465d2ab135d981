"""Release-name parsing accuracy on the development corpus: Jellybit vs plain guessit (and others).

Prints whole-case accuracy per category side by side for the tuning part, the check part and the
whole corpus, the per-field table of the whole, then, for each of Jellybit's named corrections, how
many cases it fixes and how many it breaks (the corpus run without it).

The corpus has two files. The first (`release_corpus.jsonl`) is split by a hash of each name into
a tuning part (~80 %) and a check part (~20 %); the second (`world_corpus.jsonl`) by whole sources:
the sources in `CHECK_SOURCES` are check, the others tuning. Rules are written against the tuning
part only: `--failures` lists tuning failures and refuses the check part's, whose score says
whether the rules generalize. The per-source table shows each source's part.
Run: PYTHONPATH=. .venv/bin/python bench/parse_accuracy.py [--no-corrections] [--failures CATEGORY]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import signal
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
CORPUS = DATA / "release_corpus.jsonl"
WORLD = DATA / "world_corpus.jsonl"
# Whole sources of the second file set aside before any rule was written for it (README.md there).
CHECK_SOURCES = ("moistari/rls", "Flexget/Flexget", "thcolin/scene-release-parser-php",
                 "pr0pz/scene-release-parser-php")
CATEGORIES = ("episodes", "season_packs", "anime_absolute", "daily", "movies", "paths")
FIELDS = ("media_type", "title", "year", "season", "seasons", "episodes", "absolute_episodes", "air_date",
          "country")
COUNTRY_WORDS = {"US": ("us", "usa"), "GB": ("uk", "gb")}
PARTS = ("tune", "check")

Reading = dict[str, Any]
Reader = Callable[[str], Reading]


@dataclass(frozen=True)
class Case:
    """One corpus line."""

    name: str
    category: str
    expected: Mapping[str, Any]
    source: str


    @property
    def repo(self) -> str:
        """The source repository (`owner/name`)."""
        return self.source.split("@", 1)[0]


def load_corpus(paths: Sequence[Path] = (CORPUS, WORLD)) -> list[Case]:
    """The corpus cases, file after file, in file order."""
    cases = []
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            cases.extend(Case(**json.loads(line)) for line in handle if line.strip())
    return cases


def hash_part(name: str) -> str:
    """`check` for about one name in five (fixed by a hash of the name), else `tune`."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return "check" if int.from_bytes(digest[:4], "big") % 5 == 0 else "tune"


def corpus_part(case: Case) -> str:
    """A check source's case is `check`; a case of the first file is split by the hash of its name."""
    if case.repo in CHECK_SOURCES:
        return "check"
    return hash_part(case.name) if case.repo in FIRST_SOURCES else "tune"


# The repositories of the first file, split by name; every other source's cases stay together.
FIRST_SOURCES = ("guessit-io/guessit", "pymedusa/Medusa", "igorcmoura/anitopy",
                 "TheBeastLT/parse-torrent-title", "platelminto/parse-torrent-title", "SickChill/SickChill")


def split(cases: Sequence[Case]) -> dict[str, list[Case]]:
    """The tuning and check parts of the corpus, each in file order."""
    parts: dict[str, list[Case]] = {part: [] for part in PARTS}
    for case in cases:
        parts[corpus_part(case)].append(case)
    return parts


def check_source_cases(cases: Sequence[Case]) -> list[Case]:
    """The cases of the whole check sources (the ratchet's measure of generalization)."""
    return [case for case in cases if case.repo in CHECK_SOURCES]


# ------------------------------------------------------------------------------------------- comparing


def normalize_title(title: str | None) -> str:
    """A title for comparing: case-folded, apostrophes dropped, other punctuation and spacing one space."""
    if title is None:
        return ""
    text = unicodedata.normalize("NFKC", str(title)).casefold()
    text = re.sub(r"['’`´]", "", text)
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def _country_words(code: str | None) -> tuple[str, ...]:
    return COUNTRY_WORDS.get(code, (code.casefold(),)) if code else ()


def title_matches(expected: Mapping[str, Any], got: Reading) -> bool:
    """The title is right as read, or with the year or country the parser reported beside it.

    A list of titles is a bilingual name's (`[Grp] 中文标题 / English Title - 01`): any of them is right.
    """
    title = normalize_title(got.get("title"))
    forms = {title}
    if got.get("year"):
        forms.add(f"{title} {got['year']}")
    forms.update(f"{title} {word}" for word in _country_words(got.get("country")))
    titles = expected["title"] if isinstance(expected["title"], list) else [expected["title"]]
    wanted = {normalize_title(t) for t in titles}
    wanted |= {f"{want} {word}" for want in wanted for word in _country_words(expected.get("country"))}
    return bool(forms & wanted)


def country_matches(expected: Mapping[str, Any], got: Reading) -> bool:
    """The country is in the `country` field, or is the last word of the title."""
    code = expected["country"]
    if got.get("country") == code:
        return True
    words = normalize_title(got.get("title")).split()
    return bool(words) and got.get("country") is None and words[-1] in _country_words(code)


def field_matches(field_name: str, expected: Mapping[str, Any], got: Reading) -> bool:
    """Whether one asserted field is right."""
    if field_name == "title":
        return title_matches(expected, got)
    if field_name == "country":
        return country_matches(expected, got)
    want, have = expected[field_name], got.get(field_name)
    if isinstance(want, list):
        return list(have or []) == want
    return have == want


def judge(case: Case, got: Reading) -> dict[str, bool]:
    """Each asserted field of a case: right or wrong."""
    return {f: field_matches(f, case.expected, got) for f in case.expected if f in FIELDS}


# ------------------------------------------------------------------------------------------- readers


def jellybit_reader(disabled: Iterable[str] = ()) -> Reader:
    """Jellybit's parser (optionally with some corrections switched off) in the corpus fields."""
    from jellybit.core.release import parse_release_with

    off = frozenset(disabled)

    def read(name: str) -> Reading:
        release = parse_release_with(name, off)
        return {key: getattr(release, key) for key in FIELDS} | {
            key: list(getattr(release, key)) for key in ("seasons", "episodes", "absolute_episodes")
        }

    return read


def _ints(value: Any) -> list[int]:
    values = value if isinstance(value, list) else [] if value is None else [value]
    return sorted({v for v in values if isinstance(v, int)})


def _guessit(name: str) -> dict[str, Any]:
    # Jellybit's memoized call of guessit with no options (an exception reads as nothing): the same
    # answer as calling guessit here, without parsing every name twice.
    from jellybit.core.release import plain_guessit

    return plain_guessit(name)


def guessit_reader(name: str) -> Reading:
    """Plain guessit, no options: its properties mapped one to one onto the corpus fields."""
    raw = _guessit(name)
    seasons, episodes = _ints(raw.get("season")), _ints(raw.get("episode"))
    date = raw.get("date")
    kind = raw.get("type")
    air_date = date.isoformat() if kind == "episode" and hasattr(date, "isoformat") else None
    media = "movie" if kind == "movie" else None
    if kind == "episode":
        media = "episode" if episodes or air_date else "season_pack" if seasons else None
    country = raw.get("country")
    return {
        "media_type": media, "title": str(raw["title"]) if raw.get("title") else None,
        "year": raw.get("year") if isinstance(raw.get("year"), int) else None,
        "season": seasons[0] if seasons else None, "seasons": seasons, "episodes": episodes,
        "absolute_episodes": _ints(raw.get("absolute_episode")), "air_date": air_date,
        "country": getattr(country, "alpha2", None),
    }


def parsett_reader(name: str) -> Reading:
    """parsett (PTT's Python port): its fields mapped one to one."""
    from PTT import parse_title

    try:
        raw = parse_title(name)
    except Exception:  # a parser's own failure counts as a wrong reading
        raw = {}
    seasons, episodes = _ints(raw.get("seasons")), _ints(raw.get("episodes"))
    media = "episode" if episodes or raw.get("date") else "season_pack" if seasons else "movie"
    country = raw.get("country")
    return {
        "media_type": media, "title": raw.get("title") or None, "year": raw.get("year"),
        "season": seasons[0] if seasons else None, "seasons": seasons, "episodes": episodes,
        "absolute_episodes": [], "air_date": raw.get("date"),
        "country": {"UK": "GB"}.get(country, country) if isinstance(country, str) else None,
    }


class _Stuck(BaseException):
    """A parser that did not answer in time."""


def _stuck(*_: Any) -> None:
    raise _Stuck


def anitopy_reader(name: str) -> Reading:
    """anitopy: a season-less episode number is absolute, as anime numbering goes."""
    import anitopy

    # anitopy 2.1.1 never returns on some names (`30 Rock - 4x22 -.avi`): give it two seconds.
    previous = signal.signal(signal.SIGALRM, _stuck)
    signal.alarm(2)
    try:
        raw = anitopy.parse(name) or {}
    except (Exception, _Stuck):  # a parser's own failure counts as a wrong reading
        raw = {}
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)

    def number(value: Any) -> list[int]:
        values = value if isinstance(value, list) else [] if value is None else [value]
        return sorted({int(v) for v in values if isinstance(v, str) and v.isdigit()})

    seasons, episodes = number(raw.get("anime_season")), number(raw.get("episode_number"))
    year = raw.get("anime_year")
    return {
        "media_type": "episode" if episodes else "season_pack" if seasons else None,
        "title": raw.get("anime_title"),
        "year": int(year) if isinstance(year, str) and year.isdigit() else None,
        "season": seasons[0] if seasons else None, "seasons": seasons,
        "episodes": episodes if seasons else [], "absolute_episodes": [] if seasons else episodes,
        "air_date": None, "country": None,
    }


def optional_readers() -> dict[str, Reader]:
    """The other parsers measured, where installed."""
    readers: dict[str, Reader] = {}
    for label, module, reader in (("parsett", "PTT", parsett_reader), ("anitopy", "anitopy", anitopy_reader)):
        try:
            __import__(module)
        except ImportError:
            continue
        readers[label] = reader
    return readers


# ------------------------------------------------------------------------------------------- scoring


@dataclass
class Score:
    """Whole-case and per-field hits per category."""

    cases: Counter[str]
    right: Counter[str]
    fields: dict[str, Counter[str]]          # category -> field -> asserted
    field_right: dict[str, Counter[str]]
    passed: set[str]                         # names read right

    def accuracy(self, category: str | None = None) -> float:
        """Whole-case accuracy of one category (None: all)."""
        total = sum(self.cases.values()) if category is None else self.cases[category]
        hits = sum(self.right.values()) if category is None else self.right[category]
        return hits / total if total else 1.0


Verdicts = dict[str, dict[str, bool]]


def read_all(cases: Sequence[Case], reader: Reader) -> Verdicts:
    """Read every case once: its asserted fields, right or wrong, by name."""
    return {case.name: judge(case, reader(case.name)) for case in cases}


def tally(cases: Sequence[Case], verdicts: Verdicts) -> Score:
    """Count what is right among `cases` (any part of the corpus) from verdicts read before."""
    result = Score(Counter(), Counter(), defaultdict(Counter), defaultdict(Counter), set())
    for case in cases:
        verdict = verdicts[case.name]
        result.cases[case.category] += 1
        if all(verdict.values()):
            result.right[case.category] += 1
            result.passed.add(case.name)
        for field_name, ok in verdict.items():
            result.fields[case.category][field_name] += 1
            result.field_right[case.category][field_name] += ok
    return result


def score(cases: Sequence[Case], reader: Reader) -> Score:
    """Read every case and count what is right."""
    return tally(cases, read_all(cases, reader))


def correction_effects(cases: Sequence[Case], baseline: Score) -> dict[str, dict[str, tuple[int, int]]]:
    """For each named correction and corpus part: (cases it fixes, cases it breaks), from a run without it."""
    from jellybit.core.release_fixes import CORRECTIONS

    part_of = {case.name: corpus_part(case) for case in cases}
    effects = {}
    for correction in CORRECTIONS:
        without = score(cases, jellybit_reader({correction.name}))
        fixed, broken = baseline.passed - without.passed, without.passed - baseline.passed
        effects[correction.name] = {
            part: (sum(part_of[n] == part for n in fixed), sum(part_of[n] == part for n in broken))
            for part in PARTS
        }
    return effects


def _pct(value: float) -> str:
    return f"{100 * value:5.1f}%"


def render(scores: Mapping[str, Score], heading: str = "", fields: bool = True) -> str:
    """The side-by-side table: whole-case accuracy per category, then (optionally) per field."""
    labels = list(scores)
    first = scores[labels[0]]
    lines = [f"{heading or 'category':<16}{'cases':>6}  " + "".join(f"{label:>10}" for label in labels)]
    for category in (*CATEGORIES, None):
        count = sum(first.cases.values()) if category is None else first.cases[category]
        row = "".join(f"{_pct(scores[label].accuracy(category)):>10}" for label in labels)
        lines.append(f"{category or 'overall':<16}{count:>6}  {row}")
    if not fields:
        return "\n".join(lines)
    lines.append("")
    lines.append("per field (asserted cases):")
    for category in CATEGORIES:
        for field_name in FIELDS:
            asserted = first.fields[category][field_name]
            if not asserted:
                continue
            row = "".join(
                f"{_pct(scores[label].field_right[category][field_name] / asserted):>10}" for label in labels
            )
            lines.append(f"  {category:<15}{field_name:<18}{asserted:>5}  {row}")
    return "\n".join(lines)


def render_sources(cases: Sequence[Case], verdicts: Mapping[str, Verdicts]) -> str:
    """Whole-case accuracy per source (first the first file's, then the second's), with its part."""
    labels = list(verdicts)
    lines = [f"{'source':<34}{'part':<7}{'cases':>6}  " + "".join(f"{label:>10}" for label in labels)]
    by_source: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        by_source[case.repo].append(case)
    for repo, members in by_source.items():
        parts = sorted({corpus_part(c) for c in members})
        part = parts[0] if len(parts) == 1 else "split"
        row = "".join(f"{_pct(tally(members, verdicts[label]).accuracy()):>10}" for label in labels)
        lines.append(f"{repo[:33]:<34}{part:<7}{len(members):>6}  {row}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-corrections", action="store_true", help="skip the per-correction table")
    parser.add_argument("--failures", metavar="CATEGORY",
                        help="list Jellybit's failures in a category of the tuning part ('all': every one)")
    parser.add_argument("--source", metavar="REPO",
                        help="with --failures: only this source's (never a check source)")
    args = parser.parse_args(argv)
    if args.source in CHECK_SOURCES:
        parser.error(f"{args.source} is a check source: its failures are not listed")
    cases = load_corpus()
    parts = split(cases)
    jellybit = jellybit_reader()
    readers: dict[str, Reader] = {"jellybit": jellybit, "guessit": guessit_reader, **optional_readers()}
    verdicts = {label: read_all(cases, reader) for label, reader in readers.items()}
    for part in PARTS:
        print(render({label: tally(parts[part], v) for label, v in verdicts.items()}, f"{part} part", False))
        print()
    held = check_source_cases(cases)
    print(render({label: tally(held, v) for label, v in verdicts.items()}, "check sources", False))
    print()
    print(render_sources(cases, verdicts))
    print()
    scores = {label: tally(cases, v) for label, v in verdicts.items()}
    print(render(scores, "whole corpus"))
    if args.failures:
        # The check part's failures are never listed: a rule written from them would measure nothing.
        print(f"\nJellybit's failures in {args.failures} (tuning part only; the check part is not listed):")
        for case in parts["tune"]:
            if args.source not in (None, case.repo):
                continue
            if args.failures in (case.category, "all") and case.name not in scores["jellybit"].passed:
                got = jellybit(case.name)
                wrong = {f: got.get(f) for f, ok in judge(case, got).items() if not ok}
                print(f"  {case.name!r}\n      want {dict(case.expected)}\n      got  {wrong}")
    if not args.no_corrections:
        print("\ncorrection               tune fixes/breaks  check fixes/breaks")
        for name, effect in correction_effects(cases, scores["jellybit"]).items():
            (tf, tb), (cf, cb) = effect["tune"], effect["check"]
            print(f"  {name:<24}{tf:>9} / {tb:<6}{cf:>11} / {cb:<6}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
