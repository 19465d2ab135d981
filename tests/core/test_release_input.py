"""What guessit may read of a hostile name: bounded, normalized text and a bounded amount of work.

No timing assertions: the work is counted (Python calls, the same on any machine), and the text
guessit receives is checked to be bounded.
"""

from __future__ import annotations

import re
import string
import sys
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.core.release import Release, parse_many, parse_release, parse_release_with
from jellybit.core.release_input import (
    CALL_BUDGET,
    MAX_COMPONENT_CHARS,
    MAX_FOLDERS,
    MAX_PARSE_CHARS,
    BudgetExceeded,
    calls_spent,
    parse_text,
    run_bounded,
)

# Names that kept guessit busy for seconds to minutes before it read a bounded input: every `/` is a
# path marker its rules sort matches against, and each repeated or numbered unit is one more match.
SLOW_NAMES = [
    " /  / S01" * 44,                                          # the first report: > 100 s at 400 characters
    "/E1" * 1400,
    "/1x1" * 1000,
    "".join(f"/E{i}" for i in range(1, 900)),
    "".join(f"{i % 20}x{i}/" for i in range(1, 600)),
    "".join(f"E{i} " for i in range(1, 900)),                  # one component, hundreds of episodes
    "".join(f"S{i % 99}E{i}." for i in range(1, 500)),
    "".join(f"{i % 20}x{i} " for i in range(1, 600)),
    "S01 " * 1024,
]


def _unit_repeated_four_times(text: str) -> bool:
    return any(re.search(r"\W", m.group(1)) for m in re.finditer(r"(.{1,30}?)\1{3,}", text))


def assert_bounded(text: str) -> None:
    """The input guessit receives: short, few folders, short components, no long runs of one unit."""
    components = text.split("/") if text else []
    assert len(text) <= MAX_PARSE_CHARS
    assert len(components) <= MAX_FOLDERS + 1 + text.count(" / ")
    assert all(len(c) <= MAX_COMPONENT_CHARS for c in components)
    assert not re.search(r"[\x00-\x1f\x7f]|\s\s", text)
    assert not _unit_repeated_four_times(text)


def _guessit_calls(name: str) -> int:
    before = calls_spent()
    parse_release.__wrapped__(name)
    return calls_spent() - before


def _nothing(text: str, options: Any = None) -> dict[str, Any]:
    return {}


@pytest.mark.parametrize("name", SLOW_NAMES, ids=lambda n: repr(n[:12]))
def test_slow_names_reach_guessit_bounded_and_within_the_budget(name: str) -> None:
    text = parse_text(name)
    assert_bounded(text)
    # the plain reading and, for a film, one more with `type=movie`: each within the budget
    assert _guessit_calls(name) <= 2 * CALL_BUDGET


def test_the_first_reported_slow_name_is_read_from_one_short_unit() -> None:
    assert parse_text(" /  / S01" * 44) == "S01 / S01"
    assert parse_text("/E1" * 1400) == "E1"


def test_a_name_over_the_budget_reads_as_the_corrections_alone() -> None:
    name = "".join(f"E{i} " for i in range(1, 900))
    assert parse_release.__wrapped__(name) == parse_release_with(name, guess=_nothing)


def test_repeats_with_a_separator_collapse_but_words_and_three_repeats_stay() -> None:
    assert parse_text("Show S01 S01 S01 S01 S01 1080p") == "Show S01 1080p"
    assert parse_text("Tora! Tora! Tora! (1970)") == "Tora! Tora! Tora! (1970)"
    assert parse_text("Zzzzzz.2019.1080p.mkv") == "Zzzzzz.2019.1080p.mkv"
    assert parse_text("Show.S01E01.....(1/7)") == "Show.S01E01.(1/7)"
    assert parse_text("Show - - - - - S01E01") == "Show - S01E01"


def test_separators_and_control_characters_are_normalized() -> None:
    assert parse_text("Season 02\\Show - 03.mkv") == "Season 02/Show - 03.mkv"
    assert parse_text("a//b/ /c.mkv") == "a/b/c.mkv"
    assert parse_text("Фарго /  / Fargo\x00(2014)") == "Фарго / Fargo (2014)"


# ------------------------------------------------------------------------------------------- long paths


def test_a_deep_path_keeps_its_file_name_and_nearest_folders() -> None:
    name = "/".join(f"folder{i:03d}" for i in range(200)) + "/Show Name (2010)/Season 03/Show.Name.S03E05.mkv"
    assert parse_text(name) == "folder199/Show Name (2010)/Season 03/Show.Name.S03E05.mkv"
    release = parse_release(name)
    assert (release.title, release.year, release.season, release.episodes) == ("Show Name", 2010, 3, (5,))


def test_a_folder_that_does_not_fit_gives_way_to_the_nearer_ones() -> None:
    file_name = "Show.Name.S03E05." + ".".join(f"w{i}" for i in range(40)) + ".mkv"
    name = "Downloads/" + "x" * 250 + "/Season 03/" + file_name
    assert parse_text(name) == "Season 03/" + file_name
    release = parse_release(name)
    assert (release.title, release.season, release.episodes) == ("Show Name", 3, (5,))


def test_an_overlong_file_name_keeps_its_start_and_extension() -> None:
    name = "Show.Name.S01E02." + ".".join(f"word{i}" for i in range(100)) + ".mkv"
    text = parse_text(name)
    assert len(text) == MAX_COMPONENT_CHARS
    assert text.startswith("Show.Name.S01E02.word0.word1.")
    assert text.endswith(".mkv")
    assert (parse_release(name).season, parse_release(name).episodes) == (1, (2,))


# ------------------------------------------------------------------------------------------- the budget


def _recurse(depth: int) -> int:
    return 0 if depth == 0 else 1 + _recurse(depth - 1)


def test_run_bounded_stops_after_the_budget_and_counts_it() -> None:
    before = calls_spent()
    with pytest.raises(BudgetExceeded):
        run_bounded(lambda: _recurse(500), budget=100)
    assert calls_spent() - before == 100
    assert run_bounded(lambda: _recurse(50), budget=100) == 50
    assert sys.gettrace() is None


def test_run_bounded_keeps_and_restores_an_outer_trace_function() -> None:
    seen: list[str] = []

    def outer(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            seen.append(frame.f_code.co_name)

    previous = sys.gettrace()
    sys.settrace(outer)
    try:
        assert run_bounded(lambda: _recurse(3), budget=100) == 3
        restored = sys.gettrace()
    finally:
        sys.settrace(previous)
    assert restored is outer
    assert seen.count("_recurse") == 4


def test_budget_exceeded_is_not_an_ordinary_exception() -> None:
    # guessit's own `except Exception` handlers must not swallow it and carry on untraced
    assert not issubclass(BudgetExceeded, Exception)


def test_a_pack_past_its_budget_reads_the_rest_by_the_corrections_alone() -> None:
    names = [f"Budget.Test.Show.{word}.S01E02.720p.mkv" for word in ("Alpha", "Beta", "Gamma")]
    releases = parse_many(names, budget=0)
    assert releases[0] == parse_release(names[0])
    assert releases[0].title == "Budget Test Show Alpha"
    assert releases[1:] == [parse_release_with(name, guess=_nothing) for name in names[1:]]
    assert all(r.title is None for r in releases[1:])


# ------------------------------------------------------------------------------------------- hypothesis

_TOKENS = ["S01", "E05", "S01E02", "1x02", "/", " / ", "\\", "-", " - ", ".", "_", " ", "[Grp]", "(2019)",
           "第05话", "Фарго", "\x00", "\u202e", "|", "01-12", "x264", "Part 3"]
_hostile = st.lists(st.sampled_from(_TOKENS) | st.text(string.ascii_letters + string.digits, max_size=4),
                    max_size=60).map(lambda parts: "".join(parts))
_repeated = st.tuples(_hostile.filter(bool), st.integers(4, 600)).map(lambda t: (t[0] * t[1])[:4096])


@settings(max_examples=300, deadline=None)
@given(st.one_of(_hostile, _repeated, st.text(max_size=5000)))
def test_what_guessit_reads_is_always_bounded(name: str) -> None:
    assert_bounded(parse_text(name))


@settings(max_examples=25, deadline=None)
@given(st.one_of(_hostile, _repeated))
def test_hostile_names_stay_within_the_budget_and_the_contract(name: str) -> None:
    before = calls_spent()
    release = parse_release.__wrapped__(name)
    assert calls_spent() - before <= 2 * CALL_BUDGET
    assert isinstance(release, Release)
    assert release.name == name
    assert release.title is None or len(release.title) <= MAX_PARSE_CHARS
