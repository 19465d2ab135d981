"""Context and hints in a recognition: precedence, the words that count as used, and the reasons."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.context_use import context_reasons, imdb_pick, named_seasons, read_stated, with_episode
from jellybit.core.numbering import FileOverride, Overrides
from jellybit.core.reasons import PENALTIES
from jellybit.core.records import Candidate, MediaType
from jellybit.core.release import parse_release


def by_code(found: list) -> dict:
    return {r.code: r for r in found}


def test_the_newest_hint_wins_then_older_hints_then_the_context() -> None:
    stated = read_stated("season 1, 2014, American", ["season 2", "season 3, British"])
    assert (stated.reading.season, stated.reading.year, stated.reading.country) == (3, 2014, "GB")
    assert stated.source("season").who == "your hint"
    assert stated.source("year").who == "your context"
    found = by_code(context_reasons(stated, names=(), llm_read=True))
    assert found["context_read"].message == (
        "from your hint: season 3 (“season 3”), country GB (“British”); "
        "from your hint: season 2 (“season 2”), replaced by a newer hint; "
        "from your context: season 1 (“season 1”), replaced by a newer hint, year 2014 (“2014”), "
        "country US (“American”), replaced by a newer hint"
    )
    assert (found["context_read"].weight, found["context_read"].blocking) == (0.0, False)


def test_a_provider_id_travels_with_its_kind() -> None:
    stated = read_stated("https://www.themoviedb.org/movie/275", ["tvdb 269613"])
    assert (stated.reading.provider, stated.reading.provider_id, stated.reading.provider_kind) == (
        "tvdb", "269613", "series")
    assert stated.names_a_work
    assert not read_stated("season 2", []).names_a_work


def test_anime_from_a_hint_makes_a_series_over_the_contexts_movie() -> None:
    stated = read_stated("movie", ["аниме"])
    assert (stated.reading.media_type, stated.reading.anime) == ("series", True)


def test_unused_words_block_only_when_no_llm_read_them() -> None:
    stated = read_stated("Kopenhagen kids, season 2", [])
    without = by_code(context_reasons(stated, names=("Fargo.S02.1080p",), llm_read=False))
    unused = without["context_unused"]
    assert unused.message == "these words of your context were not used: “Kopenhagen”, “kids”"
    assert unused.blocking
    assert "context_unused" not in by_code(context_reasons(stated, names=(), llm_read=True))


def test_words_found_in_the_names_confirm_them() -> None:
    stated = read_stated("Fargo season 2", ["Фарго, это сериал"])
    found = by_code(context_reasons(stated, names=("Fargo.S02.1080p.WEB-DL", "Fargo"), llm_read=False))
    assert "context_unused" not in found     # "Fargo" in the name; "Фарго" spelled in Latin is "Fargo"
    other = by_code(context_reasons(stated, names=("Sherlock.S02",), llm_read=False))
    assert other["context_unused"].message == (
        "these words of your hint were not used: “Фарго”; these words of your context were not used: “Fargo”")


def test_an_id_that_picked_nothing_is_said_and_its_words_are_unused() -> None:
    stated = read_stated("tt0386676", [])
    found = by_code(context_reasons(stated, names=(), llm_read=False, unused_ids=("imdb",)))
    assert found["context_read"].message == (
        "from your context: IMDb tt0386676 (“tt0386676”): no candidate carries this id")
    assert found["context_unused"].message == "these words of your context were not used: “tt0386676”"
    tmdb = by_code(context_reasons(read_stated("tmdb 99", []), names=(), llm_read=True,
                                   unused_ids=("provider",)))
    assert tmdb["context_read"].message.endswith("TMDB 99 (“tmdb 99”): the provider does not confirm this id")
    older = by_code(context_reasons(read_stated("tmdb 5", ["tvdb 7"]), names=(), llm_read=False,
                                    unused_ids=("provider",)))
    assert older["context_read"].message == (
        "from your hint: TVDB 7 (“tvdb 7”): the provider does not confirm this id; "
        "from your context: TMDB 5 (“tmdb 5”), replaced by a newer hint")
    assert older["context_unused"].message == "these words of your hint were not used: “tvdb 7”"


def test_many_unused_words_are_cut_in_the_message() -> None:
    stated = read_stated(" ".join(f"w{n}" for n in range(20)), [])
    message = by_code(context_reasons(stated, names=(), llm_read=False))["context_unused"].message
    assert message.endswith("“w11” and 8 more")


def test_a_season_the_file_names_contradict_blocks() -> None:
    stated = read_stated("второй сезон", [])
    found = by_code(context_reasons(stated, names=(), llm_read=True, named_seasons={1}))
    assert found["context_season"].message == "your context says season 2, the file names say season 1"
    assert found["context_season"].blocking
    for seasons, pinned in (({2}, False), ({1, 2}, False), (set(), False), ({1}, True)):
        quiet = context_reasons(stated, names=(), llm_read=True, named_seasons=seasons, season_pinned=pinned)
        assert "context_season" not in by_code(quiet), (seasons, pinned)
    hint = by_code(context_reasons(read_stated("", ["season 3"]), names=(), llm_read=True, named_seasons={1}))
    assert hint["context_season"].message.startswith("your hint says season 3")


def test_named_seasons_come_from_the_torrent_and_the_files() -> None:
    torrent = parse_release("Fargo.S01-S02.1080p")
    files = [parse_release("Fargo.S01E01.mkv"), parse_release("Fargo.E05.mkv")]
    assert named_seasons(torrent, files) >= {1}
    assert named_seasons(parse_release("Fargo.Complete.1080p"), [parse_release("Fargo.E01.mkv")]) == set()


def test_nothing_said_gives_no_reason() -> None:
    assert context_reasons(read_stated("", []), names=(), llm_read=False) == []
    assert context_reasons(read_stated("the version, please", ["это"]), names=(), llm_read=False) == []


def test_an_imdb_id_selects_the_candidate_that_carries_it() -> None:
    us = Candidate("tvdb", "73244", MediaType.SERIES, "The Office", 2005,
                   details={"ids": {"tvdb": "73244", "imdb": "tt0386676"}})
    uk = Candidate("tmdb", "2996", MediaType.SERIES, "The Office", 2001,
                   details={"external_ids": {"imdb": "tt0290978"}})
    assert imdb_pick([uk, us], "tt0386676") is us
    assert imdb_pick([uk, us], "tt0290978") is uk
    assert imdb_pick([uk, us], "tt0000001") is None


def test_an_episode_numbers_the_only_video_that_names_none() -> None:
    stated = read_stated("серия 10", [])
    video = "Fargo finale.mkv"
    releases = {video: parse_release(video)}
    pinned = with_episode(stated, Overrides(), [video], releases)
    assert pinned.files[video] == FileOverride(episodes=(10,))
    named = "Fargo.S02E09.mkv"
    assert with_episode(stated, Overrides(), [named], {named: parse_release(named)}) == Overrides()
    assert with_episode(stated, Overrides(), [video, named], releases) == Overrides()
    human = Overrides(files={video: FileOverride(episodes=(3,))})
    assert with_episode(stated, human, [video], releases) is human


_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=600)


@given(_TEXT, st.lists(_TEXT, max_size=4), st.lists(_TEXT, max_size=3), st.booleans(),
       st.sets(st.integers(0, 30), max_size=3))
def test_any_context_and_hints_give_reasons_from_the_table(context: str, hints: list[str], names: list[str],
                                                           llm_read: bool, seasons: set[int]) -> None:
    stated = read_stated(context, hints)
    found = context_reasons(stated, names=names, llm_read=llm_read, unused_ids=("imdb", "provider"),
                            named_seasons=seasons)
    assert len({r.code for r in found}) == len(found)
    for r in found:
        assert (r.weight, r.blocking) == (PENALTIES[r.code].weight, PENALTIES[r.code].blocking)
    assert ("context_unused" in {r.code for r in found}) <= (not llm_read)
