"""The parser is total: any text (arbitrary Unicode, 4 KB names, control characters) gives a reading
inside the `jellybit parse` contract, and never an exception."""

from __future__ import annotations

import datetime
import random
import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.core.release import MAX_PARSE_CHARS, Release, parse_release

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_TOKENS = ["S01", "E05", "S01E02", "1x02", "-", " - ", "[Grp]", "(2019)", "2019", "1080p", ".", "_", "/",
           "Season 2", "Part 3", "Episode 4", "第05话", "US", "UK", "01-12", "S01-S03", "313-315", "Cap.105",
           "Фарго", "|", " / ", "E10 - E17", "OVA", "Complete", "1917", "x264", "\x00", "\x1b", "\u202e"]


def assert_in_contract(release: Release, name: str) -> None:
    """Types, ranges and the invariants between fields that `docs/recognition.md` promises."""
    assert isinstance(release, Release)
    assert release.name == name
    assert release.media_type in (None, "movie", "episode", "season_pack")
    for text in (release.title, *release.alternative_titles, release.episode_title):
        assert text is None or (isinstance(text, str) and text.strip() and len(text) <= MAX_PARSE_CHARS)
        assert text is None or not _CONTROL.search(text)
    assert release.year is None or (isinstance(release.year, int) and 1000 <= release.year <= 2999)
    for numbers in (release.seasons, release.episodes, release.absolute_episodes):
        assert all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers)
        assert list(numbers) == sorted(set(numbers))
    if release.seasons:
        assert release.season == release.seasons[0]
    else:
        assert release.season is None
    assert not release.season_assumed or release.season == 1
    if release.air_date is not None:
        datetime.date.fromisoformat(release.air_date)
    assert release.country is None or re.fullmatch(r"[A-Z]{2}", release.country)
    if release.episodes or release.absolute_episodes or release.air_date:
        assert release.media_type in ("episode", "season_pack", "movie")
    assert release.media_type != "movie" or release.title


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)
_tokens = st.lists(st.sampled_from(_TOKENS) | st.text(string.ascii_letters + string.digits, max_size=6),
                   max_size=25).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.one_of(_text, _tokens))
def test_any_text_reads_inside_the_contract(name: str) -> None:
    assert_in_contract(parse_release.__wrapped__(name), name)


@settings(max_examples=15, deadline=None)
@given(_tokens, st.randoms(use_true_random=False))
def test_four_kilobyte_names_read_inside_the_contract(seed: str, rnd: random.Random) -> None:
    # A name, then a 4 KB tail of varied characters. (Highly repetitive 400-character names can
    # keep guessit itself busy for minutes; that is guessit's cost, not the contract's, and is
    # left out here so the suite stays fast.)
    alphabet = string.ascii_letters + string.digits + " .-_[]()/|" + "ФаргоСезон进击的巨人" + "\x00\x1b\u202e"
    filler = random.Random(rnd.getrandbits(64))
    name = (seed + "".join(filler.choice(alphabet) for _ in range(4096)))[:4096]
    assert len(name) == 4096
    assert_in_contract(parse_release.__wrapped__(name), name)


@settings(max_examples=60, deadline=None)
@given(_tokens, st.lists(st.characters(min_codepoint=0, max_codepoint=0x1f) | st.sampled_from(
    ["\x7f", "\u200b", "\u202e", "\ufeff"]), min_size=1, max_size=8))
def test_control_characters_never_reach_the_reading(name: str, controls: list[str]) -> None:
    mixed = "".join(a + b for a, b in zip(name, controls * len(name), strict=False)) or "".join(controls)
    assert_in_contract(parse_release.__wrapped__(mixed), mixed)
