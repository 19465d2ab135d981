"""The panel's pure helpers: formatting, filters, action rules, login redirects, add payloads."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.states import ACTIVE_STATES, COMMAND_STATES, State, can_transition
from jellybit.protocol import (
    CandidatePayload,
    DownloadPayload,
    PlanItemPayload,
    ReasonPayload,
    RecognitionDetail,
    Role,
    TitleGroup,
    TransitionRow,
)
from tests.ui.responder import download, review
from ui import format as fmt
from ui.actions import allowed
from ui.auth import safe_target
from ui.cards import review_line
from ui.pages.add import add_payload
from ui.pages.detail import valid_id
from ui.pages.downloads import matches, split
from ui.pages.review_sections import work_line
from ui.pages.status import system_words
from ui.pages.titles import coverage, title_order
from ui.review import file_overrides, ordered_reasons, preselected, reason_words, verdict


def parse_ranges(text: str) -> list[int]:
    out: list[int] = []
    for part in filter(None, text.split(", ")):
        first, _, last = part.partition("–")
        out.extend(range(int(first), int(last or first) + 1))
    return out


@given(st.sets(st.integers(min_value=0, max_value=300)))
def test_ranges_round_trip(numbers: set[int]) -> None:
    assert parse_ranges(fmt.ranges(numbers)) == sorted(numbers)


def test_ranges_and_coverage_in_words() -> None:
    assert fmt.ranges([5, 1, 2, 3, 8, 7]) == "1–3, 5, 7–8"
    assert coverage({2: [1, 3], 0: [1], 1: list(range(1, 11))}) == [
        "Specials: episode 1 (1)", "Season 1: episodes 1–10 (10)", "Season 2: episodes 1, 3 (2)"]


def test_sizes_speeds_durations_and_times() -> None:
    assert fmt.size(None) == "—"
    assert fmt.size(999) == "999 B"
    assert fmt.size(21_474_836_480) == "21.5 GB"
    assert fmt.speed(5_242_880) == "5.2 MB/s"
    assert fmt.duration(310) == "5 min"
    assert fmt.duration(3900) == "1 h 05 min"
    assert fmt.duration(8640000) == "—"  # qBittorrent's "infinite" ETA
    now = datetime(2026, 1, 2, 4, 4, 5, tzinfo=UTC)
    assert fmt.ago("2026-01-02T03:04:05.000000Z", now) == "1 h ago"
    assert fmt.ago("not a time", now) == "—"
    assert fmt.episode_code(1, [2, 3]) == "S01E02-E03"
    assert fmt.title_line("Метод", 2015, "series") == "Метод (2015) · series"


def test_action_rules_match_the_state_machine() -> None:
    assert COMMAND_STATES["undo"] == {State.DONE, State.TARGET_MISSING, State.ORPHANED}
    assert COMMAND_STATES["retry"] == {State.FAILED, State.CANCELLED, State.REVERTED}
    assert COMMAND_STATES["cancel"] == set(ACTIVE_STATES)
    targets = (("apply", State.APPLYING), ("reject", State.CANCELLED), ("refine", State.RECOGNIZING),
               ("relink", State.APPLYING))
    for action, target in targets:
        for state in State:
            assert allowed(action, state.value) == (state.value in COMMAND_STATES[action])
            if allowed(action, state.value):
                assert can_transition(state, target)


def test_filters_and_sections() -> None:
    a = download(name="Fargo.S02", state="review", title="Фарго", updated_at="2026-01-02T00:00:01Z")
    b = download(name="Matrix", state="downloading", created_at="2026-01-02T00:00:02Z")
    c = download(name="Old", state="done", settled_at="2026-01-01T00:00:00Z")
    assert matches(a, [], "фарго")
    assert not matches(a, ["done"], "")
    assert matches(c, ["done"], "OLD")
    d = download(name="Broken", state="failed", updated_at="2026-01-03T00:00:00Z")
    assert split([c, b, a, d]) == {"review": [a], "active": [b], "problems": [d], "finished": [c]}


def test_login_redirects_stay_local() -> None:
    assert safe_target("/download/x") == "/download/x"
    for bad in ("//evil.example", "https://evil.example/", "\\\\evil", "", None, "status"):
        assert safe_target(bad) == "/"


def test_add_payload_needs_exactly_one_source() -> None:
    assert add_payload({"source": "  abc  ", "context": " ctx "}) == {"source": "abc", "context": "ctx"}
    assert add_payload({"torrent": "ZGF0YQ==", "context": ""}) == {"torrent": "ZGF0YQ==", "context": ""}
    assert isinstance(add_payload({"source": "x", "torrent": "ZGF0YQ=="}), str)
    assert isinstance(add_payload({"source": " "}), str)


def test_download_ids() -> None:
    assert valid_id("01m8xfvc2z50y05693pdde2jq4")
    for bad in ("01M8XFVC2Z50Y05693PDDE2JQ4", "nope", "01m8xfvc2z50y05693pdde2jqu", "../etc/passwd"):
        assert not valid_id(bad)


def test_counts_use_the_singular_for_one() -> None:
    assert [fmt.count(n, "file") for n in (0, 1, 2)] == ["0 files", "1 file", "2 files"]


def candidate(**fields: object) -> CandidatePayload:
    return CandidatePayload.model_validate({"provider": "tmdb", "provider_id": "1", "title": "Shameless",
                                            **fields})


def test_a_candidate_card_says_what_tells_the_work_apart() -> None:
    us = {"first_year": 2011, "last_year": 2021, "country": "US", "network": "Showtime", "season_count": 11}
    assert work_line(candidate(**us)) == "2011–2021 · US · Showtime · 11 seasons"
    assert work_line(candidate(**us, episode_count=134)) == (
        "2011–2021 · US · Showtime · 11 seasons · 134 episodes")
    assert work_line(candidate(first_year=1990, last_year=1990, country="GB", season_count=1)) == (
        "1990 · GB · 1 season")
    assert work_line(candidate()) == ""


@given(st.sets(st.integers(min_value=0, max_value=2000), max_size=50))
def test_episode_numbers_read_back_what_the_table_shows(numbers: set[int]) -> None:
    assert fmt.parse_episodes(fmt.episodes_text(numbers)) == sorted(numbers)


@given(st.text(max_size=40))
def test_any_text_in_the_episodes_box_is_numbers_or_refused(text: str) -> None:
    found = fmt.parse_episodes(text)
    assert found is None or (all(isinstance(n, int) and n >= 0 for n in found) and len(found) <= 50)


def test_episode_boxes_in_words() -> None:
    assert fmt.parse_episodes("3") == [3]
    assert fmt.parse_episodes(" 3-4 ") == [3, 4]
    assert fmt.parse_episodes("E05–E07") == [5, 6, 7]
    assert fmt.parse_episodes("1, 3") == [1, 3]
    assert fmt.parse_episodes("") == []
    for bad in ("three", "4-2", "1-99", "S01E02", "-1", "1;2"):
        assert fmt.parse_episodes(bad) is None, bad


def test_reasons_blocking_first_then_by_weight_in_sentences() -> None:
    notes = [ReasonPayload.model_validate(r) for r in (
        {"code": "year_unknown", "message": "the release gives no year", "weight": 0.05},
        {"code": "context_read", "message": "from your context: country US", "weight": 0.0},
        {"code": "small_margin", "message": "TMDB's best match is only 0.02 ahead", "weight": 0.15,
         "blocking": True, "meaning": "the runner-up is nearly as good as the best candidate"})]
    assert [r.code for r in ordered_reasons(notes)] == ["small_margin", "year_unknown", "context_read"]
    assert reason_words(notes[2]) == ("TMDB's best match is only 0.02 ahead",
                                      "The runner-up is nearly as good as the best candidate")
    assert reason_words(ReasonPayload(code="odd_code", message="")) == ("odd code", "")


def recognition(**fields: object) -> RecognitionDetail:
    return RecognitionDetail.model_validate({"id": "r1", "attempt_no": 1, **fields})


def timeline(*steps: tuple[str, str]) -> list[TransitionRow]:
    return [TransitionRow.model_validate({"id": str(n), "at": "2026-01-01T00:00:00Z", "to": to,
                                          "actor": actor}) for n, (to, actor) in enumerate(steps)]


def test_the_verdict_never_contradicts_the_state() -> None:
    reasons = [{"code": "small_margin", "message": "only 0.00 ahead", "blocking": True, "weight": 0.15},
               {"code": "context_unused", "message": "words unused", "blocking": True, "weight": 0.0}]
    rec = recognition(title="The Matrix", year=1999, confidence=0.85, reasons=reasons)
    asked = verdict(download(state="review"), rec)
    assert (asked.tone, asked.headline, asked.detail) == ("decide", "Needs your decision",
                                                          "Only 0.00 ahead (and 1 more reason)")
    reasons[0]["meaning"] = "the runner-up is nearly as good as the best candidate"
    rec = recognition(title="The Matrix", year=1999, confidence=0.85, reasons=reasons)
    assert verdict(download(state="review"), rec).detail == (
        "The runner-up is nearly as good as the best candidate (and 1 more reason)")
    human = timeline(("review", "worker"), ("applying", "human"), ("done", "worker"))
    assert verdict(download(state="done"), rec, human).headline == "Laid out as you decided"
    automatic = timeline(("applying", "worker"), ("done", "worker"))
    assert verdict(download(state="done"), rec, automatic).headline == "Laid out automatically"
    failed = DownloadPayload.model_validate({**download(state="failed").model_dump(),
                                             "error": {"code": "layout_io", "message": "disk full"}})
    assert verdict(failed, rec).detail == "disk full"
    assert verdict(download(state="downloading"), None).tone == "working"


def test_asked_or_decided_while_it_downloads_says_how_far() -> None:
    rec = recognition(title="Shameless", year=2011, reasons=[
        {"code": "small_margin", "message": "only 0.00 ahead", "blocking": True, "weight": 0.15}])
    asked = verdict(download(state="review", awaiting_files=True, progress=0.37), rec)
    assert asked.headline == "Needs your decision"
    assert asked.detail.endswith("Still downloading, 37%: a decision is applied when the files arrive.")
    human = timeline(("review", "worker"), ("applying", "human"))
    waiting = verdict(download(state="applying", awaiting_files=True, progress=0.5), rec, human)
    assert (waiting.tone, waiting.headline) == ("working", "Decided as you decided")
    assert "Still downloading, 50%" in waiting.detail
    assert "Still downloading" not in verdict(download(state="review"), rec).detail
    line = review_line(review(download(state="review", awaiting_files=True), progress=0.37))
    assert line.startswith("Needs your decision (still downloading, 37%)")


def test_the_recommended_candidate_is_preselected() -> None:
    rec = recognition(recommended="c2", candidates=[candidate(id="c1", chosen=True), candidate(id="c2")])
    assert preselected(rec) == "c2"
    assert preselected(recognition(candidates=[candidate(id="c1", chosen=True)])) == "c1"
    assert preselected(recognition(candidates=[candidate()])) is None


def test_file_corrections_pin_only_what_changed() -> None:
    rows = [PlanItemPayload(source="S/e1.mkv", role=Role.VIDEO, season=1, episodes=[1]),
            PlanItemPayload(source="S/e2.mkv", role=Role.VIDEO, season=1, episodes=[2]),
            PlanItemPayload(source="S/e1.srt", role=Role.SUBTITLE, language=None)]
    edits = {"S/e1.mkv": {"episodes": "1", "season": 1, "role": "video"},    # unchanged
             "S/e2.mkv": {"episodes": "2-3", "season": 2},
             "S/e1.srt": {"language": "pt-BR"}}
    assert file_overrides(rows, edits) == {"S/e2.mkv": {"episodes": [2, 3], "season": 2},
                                           "S/e1.srt": {"language": "pt-BR"}}
    assert file_overrides(rows, {"S/e2.mkv": {"episodes": "two"}}) == (
        "e2.mkv: episodes are numbers like 3, 3-4 or 1, 2")
    assert file_overrides(rows, {"S/e1.srt": {"language": "english!"}}) == (
        "e1.srt: the language is a code like en, rus or pt-BR")
    assert file_overrides(rows, {"S/e1.mkv": {"language": "en"}}) == (
        "e1.mkv: only subtitle and audio files have a language")
    assert file_overrides(rows, {"S/e1.mkv": {"role": "ignored"}}) == {"S/e1.mkv": {"role": "ignored"}}


def test_titles_sort_alphabetically_then_by_year() -> None:
    groups = [TitleGroup(provider="tmdb", provider_id=str(n), **fields) for n, fields in enumerate(
        ({"title": "fargo", "year": 2014}, {"title": "Alias"}, {"title": "Fargo", "year": 1996}))]
    assert [(g.title, g.year) for g in sorted(groups, key=title_order)] == [
        ("Alias", None), ("Fargo", 1996), ("fargo", 2014)]


def test_qbittorrent_states_and_the_swarm_in_words() -> None:
    assert fmt.torrent_words("stalledDL") == ("Stalled: no peer is sending data", True)
    assert fmt.torrent_words("downloading") is None
    assert fmt.swarm(3, 1) == "3 seeds · 1 peer"
    assert fmt.swarm(None, None) == ""


def test_every_service_state_has_the_shared_word_and_its_own_icon() -> None:
    """The status page says each service's state as `jellybit healthcheck`, Telegram and HA do."""
    from jellybit.present import service_state
    from jellybit.protocol import SystemStatus
    from jellybit.transports import service_health as health

    states = (health.OK, health.REFUSED, health.UNREACHABLE, health.OFF, health.STARTING,
              health.MISCONFIGURED)
    icons = set()
    for state in states:
        status = SystemStatus(state=state)
        label, icon, _colour = system_words(status)
        assert label.casefold() == service_state(status) == state
        assert icon != "help"                                   # the fallback of a word it does not know
        icons.add(icon)
    assert len(icons) == len(states)
    assert system_words(SystemStatus(connected=True, state="sleeping")) == ("Sleeping", "help", "grey-7")
