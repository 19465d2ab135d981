"""Rebuild `world_corpus.jsonl`: release names of the naming cultures the first corpus lacked.

The second part of the development corpus (README.md beside this file): East-Asian fansub and
web names (Auto_Bangumi, MoviePilot), scene and international names (moistari/rls), the test files
of two renamers (tvnamer, FlexGet's series parser). Each source test's own expectation, converted
mechanically to Jellybit's `parse` contract with the rules of `build_corpus.py`; nothing here runs a
parser. Whole sources, not names, make up the check part (`CHECK_SOURCES` in
`bench/parse_accuracy.py`).

    python tests/data/build_world_corpus.py --mirrors /work/.mirror > tests/data/world_corpus.jsonl
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_corpus import SEASON_SIGN, CaseReader, Dropped, gather, git_show, head, ints, numbering

RLS = "moistari/rls"
FLEXGET = "Flexget/Flexget"
TVNAMER = "dbr/tvnamer"
BANGUMI = "EstrellaXD/Auto_Bangumi"
MOVIEPILOT = "jxxghp/MoviePilot"
PROPZ = "pr0pz/scene-release-parser-php"
THCOLIN = "thcolin/scene-release-parser-php"

Raw = dict[str, Any]


def _titles(*titles: str | None) -> str | list[str] | None:
    """One title, or the several a bilingual name carries (any of them is right as the title)."""
    found = list(dict.fromkeys(t.strip() for t in titles if t and t.strip()))
    return found[0] if len(found) == 1 else found or None


def _default_season(name: str, seasons: list[int]) -> list[int]:
    # Fansub tools report season 1 for every name without one; the contract asserts what the name says.
    return [] if seasons == [1] and not SEASON_SIGN.search(name) else seasons


# ------------------------------------------------------------------------------------------- moistari/rls


VIDEO_TYPES = {"movie", "episode", "series"}


def rls_cases(text: str) -> Iterator[tuple[str, Raw]]:
    """rls's `tests.yaml`: a mapping of release name to its expected fields."""
    for name, raw in (yaml.safe_load(text) or {}).items():
        yield str(name), raw or {}


def convert_rls(name: str, raw: Raw) -> Raw:
    """rls's video types; `series` is its season, `seriesEpisodes` every episode it lists."""
    kind = raw.get("type")
    if kind not in VIDEO_TYPES:
        raise Dropped(f"type {kind}")
    out: Raw = {}
    if raw.get("title"):
        out["title"] = str(raw["title"])
    if kind == "movie":
        out["media_type"] = "movie"
        if raw.get("year"):
            out["year"] = int(raw["year"])
        return out
    if raw.get("month") and raw.get("day") and raw.get("year"):
        out["air_date"] = datetime.date(int(raw["year"]), int(raw["month"]), int(raw["day"])).isoformat()
        out["media_type"] = "episode"
        return out
    if raw.get("year"):
        out["year"] = int(raw["year"])
    seasons = ints(raw["series"]) if raw.get("series") is not None else []
    episodes = ints(raw["episode"]) if raw.get("episode") is not None else []
    if raw.get("seriesEpisodes"):
        pairs = re.findall(r"S(\d+)E(\d+)", str(raw["seriesEpisodes"]))
        if len({s for s, _ in pairs}) > 1:
            raise Dropped("episodes of several seasons")
        episodes = sorted({int(e) for _, e in pairs})
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=[]))
    if episodes:
        out["media_type"] = "episode"
    elif seasons and kind == "series":
        out["media_type"] = "season_pack"
    return out


# ------------------------------------------------------------------------------------------- FlexGet


_S_FIELDS = {"season", "episode", "identifier", "id_type", "episodes", "id"}


def _parse_call(node: ast.AST) -> str | None:
    """The name of `parse(name=…, data=…)` / `parse_valid(…)` with no other option; else None."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("parse", "parse_valid")):
        return None
    kwargs = {k.arg: k.value for k in node.keywords}
    if set(kwargs) - {"name", "data"} or node.args:
        return None
    data = kwargs.get("data")
    return data.value if isinstance(data, ast.Constant) and isinstance(data.value, str) else None


def flexget_cases(text: str) -> Iterator[tuple[str, Raw]]:
    """`s = parse(name=…, data=…)` followed by `assert s.<field> == <literal>` in FlexGet's tests."""
    for function in ast.walk(ast.parse(text)):
        if not isinstance(function, ast.FunctionDef):
            continue
        name: str | None = None
        raw: Raw = {}
        for statement in function.body:
            if isinstance(statement, ast.Assign) and (data := _parse_call(statement.value)):
                if name and raw:
                    yield name, raw
                name, raw = data, {}
            elif isinstance(statement, ast.Assign):
                if name and raw:
                    yield name, raw
                name, raw = None, {}
            elif isinstance(statement, ast.Assert) and name and isinstance(statement.test, ast.Compare):
                left, (op,), (right,) = statement.test.left, statement.test.ops, statement.test.comparators
                on_s = isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name)
                literal = isinstance(op, ast.Eq) and isinstance(right, ast.Constant)
                if on_s and literal and left.attr in _S_FIELDS:
                    raw[left.attr] = right.value
        if name and raw:
            yield name, raw


def convert_flexget(name: str, raw: Raw) -> Raw:
    """FlexGet's season/episode, `identifier` (`S01E02`, a date, a sequence number), `episodes` (a count)."""
    out: Raw = {}
    identifier = raw.get("identifier")
    if isinstance(identifier, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", identifier):
        out["air_date"] = identifier
        out["media_type"] = "episode"
        return out
    if raw.get("id_type") == "date":
        raise Dropped("a date without its value")
    season, episode = raw.get("season"), raw.get("episode")
    if isinstance(identifier, str) and (m := re.fullmatch(r"S(\d+)E(\d+)", identifier)):
        season, episode = int(m[1]), int(m[2])
    elif isinstance(identifier, int) or raw.get("id_type") == "sequence":
        episode = identifier if isinstance(identifier, int) else raw.get("id")
        if not isinstance(episode, int):
            raise Dropped("a sequence without its value")
        return numbering(name, seasons=[], episodes=[episode], absolute=[]) | {"media_type": "episode"}
    if raw.get("id_type") not in (None, "ep"):
        raise Dropped(f"id_type {raw.get('id_type')}")
    seasons = [season] if isinstance(season, int) else []
    episodes = [episode] if isinstance(episode, int) else []
    if episodes and isinstance(raw.get("episodes"), int):
        episodes = list(range(episode, episode + raw["episodes"]))
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=[]))
    if episodes:
        out["media_type"] = "episode"
    return out


# ------------------------------------------------------------------------------------------- tvnamer


def tvnamer_cases(text: str) -> Iterator[tuple[str, Raw]]:
    """tvnamer's `files` table: `files['group'] = [{'input': …, …}]`."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            for item in node.value.elts:  # type: ignore[attr-defined]
                raw = {}
                for key, value in zip(item.keys, item.values, strict=True):
                    if isinstance(value, ast.List) and value.elts and isinstance(value.elts[0], ast.Call):
                        raw[key.value] = [datetime.date(*(a.value for a in call.args)) for call in value.elts]
                    else:
                        raw[key.value] = ast.literal_eval(value)
                yield raw["input"], raw


def convert_tvnamer(name: str, raw: Raw) -> Raw:
    """tvnamer's parsed series name, season and episodes (dates are air dates)."""
    out: Raw = {}
    if raw.get("parsedseriesname"):
        out["title"] = raw["parsedseriesname"]
    numbers = raw.get("episodenumbers") or []
    if numbers and isinstance(numbers[0], datetime.date):
        return out | {"air_date": numbers[0].isoformat(), "media_type": "episode"}
    seasons = [raw["seasonnumber"]] if raw.get("seasonnumber") is not None else []
    out.update(numbering(name, seasons=seasons, episodes=ints(numbers), absolute=[]))
    return out | {"media_type": "episode"}


# ------------------------------------------------------------------------------------------- Auto_Bangumi


_KINDS = {"episode": "episode", "movie": "movie"}


def bangumi_golden_cases(text: str) -> Iterator[tuple[str, Raw]]:
    """Auto_Bangumi's golden release titles (their generic expectation)."""
    for item in json.loads(text)["cases"]:
        yield item["raw"], item.get("expected") or {}


def convert_bangumi(name: str, raw: Raw) -> Raw:
    """Titles (Latin and Chinese), season, episode or range; the default season 1 is no assertion."""
    kind = raw.get("media_type")
    if kind not in (None, *_KINDS):
        raise Dropped(f"media type {kind}")
    out: Raw = {}
    if title := _titles(raw.get("title_en"), raw.get("title_zh"), raw.get("title")):
        out["title"] = title
    if raw.get("year"):
        out["year"] = int(raw["year"])
    if kind == "movie":
        return out | {"media_type": "movie"}
    episode = raw.get("episode")
    if episode is None:
        if raw.get("season") not in (None, 1):
            out["season"] = int(raw["season"])
        return out
    episodes = ints(episode)
    if raw.get("episode_end") is not None:
        episodes = list(range(episodes[0], ints(raw["episode_end"])[0] + 1))
    seasons = _default_season(name, [int(raw["season"])] if raw.get("season") is not None else [])
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=[]))
    if len(episodes) == 1:
        out["media_type"] = "episode"
    return out


def bangumi_test_cases(text: str, variable: str, result: str) -> Iterator[tuple[str, Raw]]:
    """`<variable> = "name"`, `<result> = parser(<variable>)`, `assert <result>.field == literal`."""
    for function in ast.walk(ast.parse(text)):
        if not isinstance(function, ast.FunctionDef):
            continue
        name, raw, usable = None, {}, False
        for statement in function.body:
            if (isinstance(statement, ast.Assign) and getattr(statement.targets[0], "id", None) == variable
                    and isinstance(statement.value, ast.Constant)):
                if name and raw and usable:
                    yield name, raw
                name, raw, usable = statement.value.value, {}, False
            elif isinstance(statement, ast.Assign) and getattr(statement.targets[0], "id", None) == result:
                # a parser told the season beforehand (`season=3`) is not reading the name alone
                call = statement.value
                usable = isinstance(call, ast.Call) and not call.keywords
            elif isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Compare):
                left, right = statement.test.left, statement.test.comparators[0]
                if (isinstance(left, ast.Attribute) and getattr(left.value, "id", None) == result
                        and isinstance(right, ast.Constant)):
                    raw[left.attr] = right.value
        if name and raw and usable:
            yield name, raw


def convert_bangumi_test(name: str, raw: Raw) -> Raw:
    """The assertions of Auto_Bangumi's parser tests, as its golden cases are converted."""
    raw = dict(raw)
    raw.setdefault("media_type", "episode" if raw.get("episode") is not None else None)
    return convert_bangumi(name, raw)


# ------------------------------------------------------------------------------------------- MoviePilot


def moviepilot_cases(text: str) -> Iterator[tuple[str, Raw]]:
    """MoviePilot's `meta_cases`: a title or a path with its target (those with a subtitle line left out)."""
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "meta_cases":
            for item in ast.literal_eval(node.value):
                if not item.get("subtitle"):
                    yield item.get("title") or item["path"], item["target"]


def _span(value: str, letter: str) -> list[int]:
    found = [int(n) for n in re.findall(rf"{letter}(\d+)", value)]
    if not found:
        return []
    return list(range(found[0], found[-1] + 1))


def convert_moviepilot(name: str, raw: Raw) -> Raw:
    """Titles, year, `S01`/`S01-S02` seasons and `E08`/`E01-E03` episodes; `电影` is a film."""
    out: Raw = {}
    if title := _titles(raw.get("en_name"), raw.get("cn_name")):
        out["title"] = title
    if raw.get("year"):
        out["year"] = int(raw["year"])
    if raw.get("type") == "电影":
        return out | {"media_type": "movie"}
    if raw.get("part"):
        raise Dropped("a part")
    seasons = _default_season(name, _span(raw.get("season") or "", "S"))
    episodes = _span(raw.get("episode") or "", "E")
    if len(seasons) > 1 and out.get("year"):
        del out["year"]   # `s01-s02 2015-2017`: the years the seasons ran, not the show's year
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=[]))
    if seasons and not episodes and raw.get("type") == "电视剧":
        out["media_type"] = "season_pack"
    elif len(episodes) == 1:
        out["media_type"] = "episode"
    return out


# ------------------------------------------------------------------------------- PHP scene parsers


_PROPZ_CASE = re.compile(r"new ReleaseParser\(\s*'((?:[^'\\]|\\.)*)'[^)]*\),\s*'((?:[^'\\]|\\.)*)'")


def propz_cases(text: str) -> Iterator[tuple[str, Raw]]:
    """pr0pz's test table: a release name and its expected `Key: value / Key: value` summary."""
    for m in _PROPZ_CASE.finditer(text):
        summary = m[2].replace("\\'", "'")
        fields = dict(part.split(": ", 1) for part in summary.split(" / ") if ": " in part)
        yield m[1].replace("\\'", "'"), fields


def convert_propz(name: str, raw: Raw) -> Raw:
    """Films and TV: the show (else the title), year, season, episode or range."""
    kind = raw.get("Type")
    if kind not in ("Movie", "TV", "Anime"):
        raise Dropped(f"type {kind}")
    out: Raw = {"title": raw.get("Show") or raw["Title"]}
    if raw.get("Year"):
        out["year"] = int(raw["Year"])
    if kind == "Movie":
        return out | {"media_type": "movie"}
    if raw.get("Date"):
        raise Dropped("a date")
    seasons = ints(raw["Season"]) if raw.get("Season") else []
    bounds = ints(raw["Episode"].split("-")) if raw.get("Episode") else []
    episodes = list(range(bounds[0], bounds[-1] + 1)) if bounds else []
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=[]))
    if episodes:
        out["media_type"] = "episode"
    elif seasons:
        out["media_type"] = "season_pack"
    return out


def thcolin_cases(text: str) -> Iterator[tuple[str, Raw]]:
    """thcolin's `releases.json`: each release name with the reading its tests expect."""
    yield from json.loads(text).items()


def convert_thcolin(name: str, raw: Raw) -> Raw:
    """Title, year (not its `guess`), season and episode; `tvshow` without an episode is a season pack."""
    out: Raw = {"title": raw["title"]}
    if raw.get("year"):
        out["year"] = int(raw["year"])
    if raw["type"] == "movie":
        return out | {"media_type": "movie"}
    seasons = ints(raw["season"]) if raw.get("season") is not None else []
    episodes = ints(raw["episode"]) if raw.get("episode") is not None else []
    out.update(numbering(name, seasons=seasons, episodes=episodes, absolute=[]))
    return out | {"media_type": "episode" if episodes else "season_pack"}


# ------------------------------------------------------------------------------------------- main


Reader = tuple[str, str, Callable[[str], Iterator[tuple[str, Raw]]], Callable[[str, Raw], Raw]]
SOURCES: tuple[Reader, ...] = (
    (BANGUMI, "backend/src/test/fixtures/release_title_golden.json", bangumi_golden_cases, convert_bangumi),
    (BANGUMI, "backend/src/test/test_raw_parser.py",
     lambda text: bangumi_test_cases(text, "content", "info"), convert_bangumi_test),
    (BANGUMI, "backend/src/test/test_torrent_parser.py",
     lambda text: bangumi_test_cases(text, "file_name", "bf"), convert_bangumi_test),
    (MOVIEPILOT, "tests/cases/meta.py", moviepilot_cases, convert_moviepilot),
    (TVNAMER, "tests/test_files.py", tvnamer_cases, convert_tvnamer),
    (RLS, "tests.yaml", rls_cases, convert_rls),
    (FLEXGET, "tests/test_seriesparser.py", flexget_cases, convert_flexget),
    (PROPZ, "ReleaseParserTest.php", propz_cases, convert_propz),
    (THCOLIN, "utils/releases.json", thcolin_cases, convert_thcolin),
)


def collect(mirrors: Path, known: set[str]) -> tuple[list[Raw], Counter[str]]:
    """Every case of every source not already in the first corpus; and why the others were dropped."""
    def reader(repo: str, path: str, read: Callable[[str], Iterator[tuple[str, Raw]]],
               convert: Callable[[str, Raw], Raw]) -> CaseReader:
        items = ((name.replace("\n", " "), raw) for name, raw in read(git_show(mirrors, repo, path)))
        return f"{repo}@{head(mirrors, repo)}:{path}", items, convert

    return gather((reader(*source) for source in SOURCES), set(known))


def main() -> None:
    """Write the cases as JSON lines to stdout and the drop counts to stderr."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    first = Path(__file__).resolve().parent / "release_corpus.jsonl"
    known = {json.loads(line)["name"] for line in first.read_text(encoding="utf-8").splitlines() if line}
    cases, dropped = collect(args.mirrors, known)
    for line in cases:
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    counts = Counter(c["source"].split("@")[0] for c in cases)
    print(f"{len(cases)} cases: {dict(sorted(counts.items()))}", file=sys.stderr)
    for why, count in dropped.most_common():
        print(f"dropped {count:4d}  {why}", file=sys.stderr)


if __name__ == "__main__":
    main()
