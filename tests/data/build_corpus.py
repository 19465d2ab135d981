"""Rebuild `release_corpus.jsonl` from the test suites of public release-name parsers.

Each case's expected reading is the source test suite's own expectation, converted mechanically to
Jellybit's `parse` contract (see README.md beside this file for the rules and what is dropped).
Nothing here runs a parser. The sources are read from local bare git mirrors:

    python tests/data/build_corpus.py --mirrors /work/.mirror > tests/data/release_corpus.jsonl

where `<mirrors>/<owner>+<name>/repo` is a git directory of each repository below.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

GUESSIT = "guessit-io/guessit"
MEDUSA = "pymedusa/Medusa"
ANITOPY = "igorcmoura/anitopy"
PTT = "TheBeastLT/parse-torrent-title"
PTN = "platelminto/parse-torrent-title"
SICKCHILL = "SickChill/SickChill"

GUESSIT_FILES = ("guessit/test/episodes.yml", "guessit/test/movies.yml", "guessit/test/rules/episodes.yml",
                 "guessit/test/rules/title.yml", "guessit/test/rules/country.yml",
                 "guessit/test/rules/date.yml")
PTT_FILES = ("test/main.js", "test/title.js", "test/season.js", "test/episode.js", "test/date.js",
             "test/year.js", "test/complete.js", "test/volume.js", "test/group.js", "test/language.js")

# Signs in a name, used only to decide which convention a season-less episode number falls under.
SEASON_SIGN = re.compile(r"(?i)(?<![a-z])s\d{1,4}|(?<!\d)\d{1,2}x\d{1,4}(?!\d)|season|saison|temporada|"
                         r"stagione|staffel|сезон|sezon|series[ ._]?\d|第.{1,3}[季期]")
_MARKER_BEFORE = (r"(?<![a-z])(?:e|ep|eps|episode|episodio|épisode|folge|part|pt|chapter|cap|caap|capitulo|"
                  r"серия|серии|seriya|serija|serya)[ ._#-]*")
_MARKER_AFTER = r"[ ._-]*(?:сер\b|серия|серии|seriya|serija|serya|(?:of|iz)[ ._-]?\d)"


def episode_sign(name: str, number: int) -> bool:
    """An explicit episode marker right before (or after) this episode number."""
    digits = rf"(?<!\d)0*{number}(?!\d)"
    roman = {1: "i", 2: "ii", 3: "iii", 4: "iv", 5: "v", 6: "vi", 7: "vii", 8: "viii", 9: "ix", 10: "x"}
    pattern = rf"{_MARKER_BEFORE}{digits}|{digits}{_MARKER_AFTER}"
    if number in roman:
        pattern += rf"|(?<![a-z])part[ ._-]*{roman[number]}(?![a-z])"
    return bool(re.search(f"(?i){pattern}", name))


COUNTRY_ALIASES = {"UK": "GB"}


class Dropped(Exception):
    """A case the contract cannot express, or whose reading is ambiguous."""


def _git_dir(mirrors: Path, repo: str) -> Path:
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    return git_dir / ".git" if (git_dir / ".git").is_dir() else git_dir


def git_show(mirrors: Path, repo: str, path: str) -> str:
    """One file of a mirrored repository at its HEAD."""
    git_dir = _git_dir(mirrors, repo)
    return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout


def head(mirrors: Path, repo: str) -> str:
    """The commit a mirror's HEAD points at."""
    git_dir = _git_dir(mirrors, repo)
    return subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


# ------------------------------------------------------------------------------------------- conventions


def ints(value: Any) -> list[int]:
    """A number or a list of numbers as sorted ints; anything else (`07.5`, `4a`) cannot be expressed."""
    values = value if isinstance(value, list | tuple) else [value]
    out = []
    for v in values:
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, str) and v.isdigit())):
            raise Dropped(f"number {v!r}")
        out.append(int(v))
    return sorted(set(out))


def is_path(name: str) -> bool:
    """A file path (not a `Title / Alias` separator)."""
    return "\\" in name or bool(re.search(r"\S/\S", name))


ANIME_STYLE = re.compile(r"^\s*[\[(【]|[\[(][0-9A-Fa-f]{8}[\])]|^[^ .]*_[^ .]*_")


def numbering(name: str, *, seasons: list[int], episodes: list[int], absolute: list[int],
              anime: bool = False, year: int | None = None) -> dict[str, Any]:
    """The contract's numbering fields from a source's season/episode/absolute numbers.

    A season-less episode number is season 1 after an explicit episode marker (`E07`, `Episode 7`,
    `Part 3`, `01of11`) in a name not in fansub style, else an absolute number (`[Grp] Title - 047`,
    `Title 1071`, `[Grp] Title Ep 12`, anime sources); when the name shows a season the source did not
    assert, the season is left unasserted. A season that is only the year (guessit's reading of
    `Show.2013.E01`) is no season.
    """
    if year is not None and seasons == [year] and not re.search(rf"(?i)(?:s|season\W*){year}", name):
        seasons = []
    fansub = bool(ANIME_STYLE.search(name.replace("\\", "/").rsplit("/", 1)[-1]))
    out: dict[str, Any] = {}
    if seasons and 1900 <= seasons[0] <= 2100 and f"({seasons[0]})" in name:
        raise Dropped("a year in parentheses asserted as a season")
    if seasons:
        out["season"] = seasons[0]
        if len(seasons) > 1:
            out["seasons"] = seasons
    if episodes and not seasons and not absolute:
        if anime:
            absolute, episodes = episodes, []
        elif SEASON_SIGN.search(name):
            pass
        elif episode_sign(name, episodes[0]) and not fansub:
            out["season"] = 1
        else:
            absolute, episodes = episodes, []
    if episodes:
        out["episodes"] = episodes
    if absolute:
        out["absolute_episodes"] = absolute
    return out


def category(name: str, expected: dict[str, Any], source: str) -> str:
    """Which family a case belongs to: by its expectation, else by the shape of its name."""
    if is_path(name):
        return "paths"
    if expected.get("air_date"):
        return "daily"
    if expected.get("absolute_episodes") or source.startswith(ANITOPY):
        return "anime_absolute"
    if expected.get("episodes"):
        return "episodes"
    if expected.get("media_type") == "season_pack" or len(expected.get("seasons", ())) > 1:
        return "season_packs"
    if expected.get("media_type") == "movie":
        return "movies"
    if re.search(r"(?i)(?<![a-z])s\d{1,2}[ ._-]?e\d|\d{1,2}x\d{2}", name):
        return "episodes"
    if SEASON_SIGN.search(name) or "season" in expected:
        return "season_packs"
    if name.lstrip().startswith("["):
        return "anime_absolute"
    return "movies"


def country_code(value: Any) -> str:
    """ISO 3166-1 alpha-2, uppercase (`UK` is `GB`)."""
    code = str(value).upper()
    if not re.fullmatch(r"[A-Z]{2}", code):
        raise Dropped(f"country {value!r}")
    return COUNTRY_ALIASES.get(code, code)


def media_type(source_type: str | None, expected: dict[str, Any]) -> str | None:
    """guessit's `type` in the contract: an episode without any number is left unasserted."""
    if source_type == "movie":
        return "movie"
    if source_type == "episode":
        if expected.get("episodes") or expected.get("absolute_episodes") or expected.get("air_date"):
            return "episode"
        if "season" in expected:
            return "season_pack"
    return None


def case(name: str, expected: dict[str, Any], source: str) -> dict[str, Any]:
    """One corpus line."""
    if not expected:
        raise Dropped("asserts none of the contract's fields")
    return {"name": name, "category": category(name, expected, source), "expected": expected,
            "source": source}


# ------------------------------------------------------------------------------------- guessit-style YAML


class _TupleKeyLoader(yaml.SafeLoader):
    """Medusa's YAML uses lists of names as keys; they become tuples."""


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    out = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        out[tuple(key) if isinstance(key, list) else key] = loader.construct_object(value_node, deep=True)
    return out


_TupleKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def yaml_cases(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, expectation) as guessit's test_yml.py reads them: shared expectations, `__default__`."""
    data = yaml.load(text, Loader=_TupleKeyLoader)
    items = list(data.items())
    last = None
    for i in range(len(items) - 1, -1, -1):
        if items[i][1] is None:
            items[i] = (items[i][0], last)
        else:
            last = items[i][1]
    default = dict(data.get("__default__") or {})
    for key, expected in items:
        if key == "__default__":
            continue
        merged = {**default, **(expected or {})}
        for name in key if isinstance(key, tuple) else (key,):
            yield str(name), merged


def convert_guessit(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    """A guessit-format expectation in the contract."""
    if name.startswith("-"):
        raise Dropped("a negative test")
    name = name.lstrip("+ ")
    if raw.get("options"):
        raise Dropped("needs parser options")
    raw = {k: v for k, v in raw.items() if isinstance(k, str) and not k.startswith("-")}
    out: dict[str, Any] = {}
    title = raw.get("title")
    if isinstance(title, str | int) and not isinstance(title, bool):
        out["title"] = str(title)
    elif title is not None:
        raise Dropped("several titles")
    if isinstance(raw.get("year"), int):
        out["year"] = raw["year"]
    elif raw.get("year") is not None:
        raise Dropped("several years")
    is_episode = raw.get("type") == "episode"
    seasons = ints(raw["season"]) if raw.get("season") is not None else []
    episodes = ints(raw["episode"]) if raw.get("episode") is not None else []
    absolute = ints(raw["absolute_episode"]) if raw.get("absolute_episode") is not None else []
    if absolute and not seasons and episodes == absolute:
        episodes = []          # Medusa repeats an anime's absolute number as its episode
    if is_episode or raw.get("type") is None:
        out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=absolute,
                             year=out.get("year")))
    date = raw.get("date")
    if isinstance(date, datetime.date) and is_episode:
        out["air_date"] = date.isoformat()
    if raw.get("country") is not None:
        out["country"] = country_code(raw["country"])
    if "year" in out and out.get("season") == out["year"] and re.search(rf"(?i)s{out['year']}", name):
        del out["year"]        # `S2014E18`: the contract reads a year-numbered season as a season only
    kind = media_type(raw.get("type"), out)
    if kind:
        out["media_type"] = kind
    return out


# ------------------------------------------------------------------------------------------- other formats


def anitopy_cases(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """anitopy's fixture tables (a Python literal): name, options, expected elements."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            for entry in ast.literal_eval(node.value):
                name, options, expected = entry
                yield name, {"options": options, **expected}


def convert_anitopy(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    """anitopy's elements in the contract (its tests assert every element, so a missing year is none)."""
    if raw.get("options"):
        raise Dropped("needs parser options")
    kind = raw.get("anime_type")
    if kind and str(kind).upper() not in ("TV",):
        raise Dropped(f"anime_type {kind}: a special or film the numbering fields cannot express")
    if raw.get("episode_number_alt"):
        raise Dropped("two numberings with no season")
    out: dict[str, Any] = {}
    if raw.get("anime_title"):
        out["title"] = raw["anime_title"]
    out["year"] = int(raw["anime_year"]) if raw.get("anime_year") else None
    episodes = []
    if raw.get("episode_number") is not None:
        episodes = ints(raw["episode_number"])
        if len(episodes) == 2 and re.search(rf"0*{episodes[0]}\s*[-~]\s*0*{episodes[1]}(?!\d)", name):
            episodes = list(range(episodes[0], episodes[1] + 1))
    seasons = ints(raw["anime_season"]) if raw.get("anime_season") else []
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=[], anime=True))
    return out


_IT = re.compile(r"\n\s*it\(")
_RELEASE = re.compile(r"const releaseName\s*=\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')")
_EXPECT = re.compile(r"expect\(parse\(releaseName\)\)\.to\.(?:deep\.)?(include|equal)\(")
_ABSENT = re.compile(r"expect\(parse\(releaseName\)\)\.to\.not\.have\.property\(\"(\w+)\"\)")


def _js_string(literal: str) -> str:
    if literal.startswith("'"):
        literal = '"' + literal[1:-1].replace('\\"', '"').replace("\\'", "'").replace('"', '\\"') + '"'
    return json.loads(literal)


def _js_object(text: str, start: int) -> dict[str, Any]:
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch in "\"'":
            j = i + 1
            while text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            i = j
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                break
        i += 1
    body = text[start:i + 1]
    body = re.sub(r"'((?:[^'\\]|\\.)*)'", lambda m: json.dumps(_js_string(m.group(0))), body)
    body = re.sub(r"([{,]\s*)([A-Za-z_$][\w$]*)\s*:", r'\1"\2":', body)
    body = re.sub(r",(\s*[}\]])", r"\1", body)
    return json.loads(body)


def ptt_cases(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """`it(...)` blocks of PTT's mocha tests: the release name and what the test asserts of it."""
    for block in _IT.split(text)[1:]:
        names = _RELEASE.findall(block)
        if len(names) != 1:
            continue
        expected: dict[str, Any] = {}
        for match in _EXPECT.finditer(block):
            brace = block.index("{", match.end() - 1)
            try:
                expected.update(_js_object(block, brace))
            except (json.JSONDecodeError, IndexError):
                expected["__unreadable__"] = True
        expected["__absent__"] = _ABSENT.findall(block)
        yield _js_string(names[0]), expected


def convert_ptt(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    """PTT's assertions in the contract; `not.have.property("episodes")` asserts no episodes."""
    if raw.get("__unreadable__"):
        raise Dropped("an assertion this reader cannot parse")
    out: dict[str, Any] = {}
    if isinstance(raw.get("title"), str):
        out["title"] = raw["title"]
    if isinstance(raw.get("year"), int):
        out["year"] = raw["year"]
    seasons = ints(raw["seasons"]) if raw.get("seasons") else ints(raw["season"]) if "season" in raw else []
    episodes = ints(raw["episodes"]) if raw.get("episodes") else ints(raw["episode"]) if "episode" in raw \
        else []
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=[]))
    if isinstance(raw.get("date"), str):
        out["air_date"] = raw["date"]
    absent = set(raw.get("__absent__", ()))
    if absent & {"episodes", "episode"} and not (episodes or "episodes" in raw):
        out["episodes"] = []
    if "year" in absent:
        out["year"] = None
    return out


def ptn_cases(inputs: str, outputs: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """platelminto's input.json/output_raw.json pairs (its test asserts every key it lists)."""
    yield from zip(json.loads(inputs), json.loads(outputs), strict=True)


def convert_ptn(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    """PTN's raw reading in the contract: a missing year is asserted as none."""
    out: dict[str, Any] = {}
    if isinstance(raw.get("title"), str) and raw["title"]:
        out["title"] = raw["title"]
    out["year"] = raw["year"] if isinstance(raw.get("year"), int) else None
    seasons = ints(raw["season"]) if raw.get("season") is not None else []
    episodes = ints(raw["episode"]) if raw.get("episode") is not None else []
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=[]))
    if raw.get("day") and raw.get("month") and isinstance(raw.get("year"), int):
        out["air_date"] = datetime.date(raw["year"], int(raw["month"]), int(raw["day"])).isoformat()
        out.pop("year")
    return out


_PARSE_RESULT = ("original_name", "series_name", "season_number", "episode_numbers", "extra_info",
                 "release_group", "air_date", "ab_episode_numbers")


def _parse_result(node: ast.AST) -> dict[str, Any] | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    assert isinstance(node, ast.Call)
    values: dict[str, Any] = {}
    for key, arg in zip(_PARSE_RESULT, node.args, strict=False):
        values[key] = _literal(arg)
    for kw in node.keywords:
        values[str(kw.arg)] = _literal(kw.value)
    return values


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "date":
        return datetime.date(*(ast.literal_eval(a) for a in node.args))
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None                                     # quality=common.Quality…: not ours


def sickchill_cases(text: str) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """SickChill's name-parser tables: every ParseResult is compared whole."""
    tree = ast.parse(text)
    for node in tree.body:
        if not isinstance(node, ast.Assign) or not isinstance(node.targets[0], ast.Name):
            continue
        target = node.targets[0].id
        if target in ("SIMPLE_TEST_CASES", "ANIME_TEST_CASES"):
            assert isinstance(node.value, ast.Dict)
            for group in node.value.values:
                assert isinstance(group, ast.Dict)
                for key, value in zip(group.keys, group.values, strict=True):
                    yield ast.literal_eval(key), _parse_result(value)
        elif target in ("COMBINATION_TEST_CASES", "UNICODE_TEST_CASES"):
            assert isinstance(node.value, ast.List)
            for item in node.value.elts:
                assert isinstance(item, ast.Tuple)
                yield ast.literal_eval(item.elts[0]), _parse_result(item.elts[1])


def convert_sickchill(name: str, raw: dict[str, Any] | None) -> dict[str, Any]:
    """A whole ParseResult in the contract: a season with no episodes asserts none."""
    if raw is None:
        raise Dropped("the source expects the parser to give up")
    out: dict[str, Any] = {}
    if raw.get("series_name"):
        out["title"] = raw["series_name"]
    seasons = [raw["season_number"]] if raw.get("season_number") is not None else []
    episodes = ints(raw.get("episode_numbers") or [])
    absolute = ints(raw.get("ab_episode_numbers") or [])
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=absolute))
    if raw.get("air_date"):
        out["air_date"] = raw["air_date"].isoformat()
        out["media_type"] = "episode"
    elif seasons and not episodes and not absolute:
        out["episodes"] = []
        out["media_type"] = "season_pack"
    elif episodes or absolute:
        out["media_type"] = "episode"
    return out


# ------------------------------------------------------------------------------------------- main


def collect(mirrors: Path) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Every case of every source, converted; and why the others were dropped."""
    commits = {repo: head(mirrors, repo) for repo in (GUESSIT, MEDUSA, ANITOPY, PTT, PTN, SICKCHILL)}

    def where(repo: str, path: str) -> str:
        return f"{repo}@{commits[repo]}:{path}"

    readers: list[tuple[str, Iterator[tuple[str, Any]], Any]] = []
    for path in GUESSIT_FILES:
        readers.append((where(GUESSIT, path), yaml_cases(git_show(mirrors, GUESSIT, path)), convert_guessit))
    readers.append((where(MEDUSA, "tests/test_guessit.yml"),
                    yaml_cases(git_show(mirrors, MEDUSA, "tests/test_guessit.yml")), convert_guessit))
    for path in ("tests/fixtures/table.py", "tests/fixtures/failing_table.py"):
        text = git_show(mirrors, ANITOPY, path)
        readers.append((where(ANITOPY, path), anitopy_cases(text), convert_anitopy))
    for path in PTT_FILES:
        readers.append((where(PTT, path), ptt_cases(git_show(mirrors, PTT, path)), convert_ptt))
    readers.append((where(PTN, "tests/files/output_raw.json"),
                    ptn_cases(git_show(mirrors, PTN, "tests/files/input.json"),
                              git_show(mirrors, PTN, "tests/files/output_raw.json")), convert_ptn))
    readers.append((where(SICKCHILL, "tests/name_parser_tests.py"),
                    sickchill_cases(git_show(mirrors, SICKCHILL, "tests/name_parser_tests.py")),
                    convert_sickchill))
    return gather(readers, set(), rename=lambda source, name: name.lstrip("+ ") if source.startswith(GUESSIT)
                  else name)


# A source (`repo@commit:path`), its (name, raw) cases, and the conversion of one.
CaseReader = tuple[str, Iterable[tuple[str, Any]], Callable[[str, Any], Any]]


def gather(readers: Iterable[CaseReader], seen: set[str], *,
           rename: Callable[[str, str], str] = lambda source, name: name,
           ) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Every reader's cases converted, in order: a name already `seen` is dropped (the first case is
    kept), and why each dropped case went is counted under its repository. `rename(source, name)`
    gives the name a case is stored under (after `convert` read the source's own)."""
    cases: list[dict[str, Any]] = []
    dropped: Counter[str] = Counter()
    for source, items, convert in readers:
        for name, raw in items:
            try:
                expected = convert(name, raw)
                name = rename(source, name)
                line = case(name, expected, source)
            except Dropped as why:
                dropped[f"{source.split('@')[0]}: {re.sub(r'[0-9]+', 'N', str(why))}"] += 1
                continue
            if name in seen:
                dropped["duplicate name (the first case is kept)"] += 1
                continue
            seen.add(name)
            cases.append(line)
    return cases, dropped


def main() -> None:
    """Write the corpus as JSON lines to stdout and the drop counts to stderr."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    cases, dropped = collect(args.mirrors)
    for line in cases:
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    counts = Counter(c["category"] for c in cases)
    print(f"{len(cases)} cases: {dict(sorted(counts.items()))}", file=sys.stderr)
    for why, count in dropped.most_common():
        print(f"dropped {count:4d}  {why}", file=sys.stderr)


if __name__ == "__main__":
    main()
