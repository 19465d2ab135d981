"""The presentation part's words: one name per state, titles, reasons in order, the verdict line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jellybit.present import (
    ACTIONS,
    STATE_NAMES,
    actions,
    allowed,
    is_live,
    ordered_reasons,
    provider_name,
    service_detail,
    service_heading,
    service_line,
    service_state,
    state_name,
    states_for,
    title_line,
    verdict,
    verdict_line,
)
from jellybit.protocol import (
    COMMAND_STATES,
    DownloadPayload,
    LinkStatus,
    ReasonPayload,
    State,
    SystemStatus,
)

NOW = "2026-01-02T03:04:05.000000Z"


def download(state: str, **fields: object) -> DownloadPayload:
    """A download as the worker publishes it."""
    return DownloadPayload.model_validate({"id": "01jbz9x8k4m3n2p1q0r9s8t7v6", "name": "Fargo.S02",
                                           "state": state, "created_at": NOW, "updated_at": NOW, **fields})


def test_every_state_has_one_name_and_an_unknown_one_is_read_from_its_value() -> None:
    assert set(STATE_NAMES) == set(State)
    assert len(set(STATE_NAMES.values())) == len(State)
    assert state_name("review") == "Needs review"
    assert state_name("paused_by_hand") == "Paused by hand"


def test_the_actions_of_a_state_are_the_tables_in_its_order() -> None:
    assert ACTIONS == tuple(COMMAND_STATES)
    for state in State:
        assert actions(state) == tuple(a for a in COMMAND_STATES if state in COMMAND_STATES[a])
        assert all(allowed(a, state.value) for a in actions(state))
    assert actions(None) == ()
    assert not allowed("launch", State.REVIEW)
    assert states_for("launch") == frozenset()


def test_titles_providers_and_live_files_in_words() -> None:
    assert title_line("Метод", 2015, "series") == "Метод (2015) · series"
    assert title_line("進撃の巨人") == "進撃の巨人"
    assert title_line(None, 2015) == ""
    assert [provider_name(p) for p in ("tmdb", "tvdb", "tvmaze", "imdb", "anidb")] == [
        "TMDB", "TVDB", "TVMaze", "IMDb", "anidb"]
    assert {s for s in LinkStatus if is_live(s)} == {LinkStatus.LINKED, LinkStatus.COPIED, LinkStatus.EXISTS}


@given(st.lists(st.tuples(st.booleans(), st.floats(0, 1)), max_size=8))
def test_reasons_come_blocking_first_then_the_weightiest(pairs: list[tuple[bool, float]]) -> None:
    reasons = [ReasonPayload(code=f"c{n}", message="m", blocking=blocking, weight=weight)
               for n, (blocking, weight) in enumerate(pairs)]
    ordered = ordered_reasons(reasons)
    keys = [(not r.blocking, -r.weight) for r in ordered]
    assert keys == sorted(keys)
    assert sorted(r.code for r in ordered) == sorted(r.code for r in reasons)


def test_the_verdict_line_never_contradicts_the_state() -> None:
    failed = download("failed", error={"code": "stalled", "message": "no peer sent data for 30 min"})
    assert verdict_line(verdict(failed, None)) == "Failed: no peer sent data for 30 min"
    assert verdict_line(verdict(download("recognizing"), None)).startswith("Recognizing… Reading")
    assert verdict_line(verdict(download("review"), None)) == (
        "Needs your decision: Nothing confirmed what this is.")
    done = download("done", title="Fargo", year=2014)
    assert verdict_line(verdict(done, None)) == "Laid out automatically: Fargo (2014) (a confirmed match, " \
                                                "nothing in doubt)"
    for state in State:
        assert verdict_line(verdict(download(state.value), None))


def test_an_outside_service_in_one_line() -> None:
    """A service's state is the one `info` names, or read from `connected`/`enabled` for an older
    worker; the line gives the detail when it says more, then what to do."""
    refused = SystemStatus(connected=False, state="refused", detail="401 Unauthorized",
                           hint="the key was refused: check llm.api_key")
    assert service_state(refused) == "refused"
    assert service_line(refused) == "refused: 401 Unauthorized — the key was refused: check llm.api_key"
    assert service_line(SystemStatus(connected=True, state="ok", detail="ok")) == "ok"
    assert service_state(SystemStatus(connected=True)) == "ok"
    assert service_state(SystemStatus(connected=False)) == "unreachable"
    assert service_state(SystemStatus(enabled=False)) == "not configured"
    assert service_state(SystemStatus()) == "starting"


def test_an_outside_service_as_a_heading_and_its_detail() -> None:
    """The panel's heading is the same state word; the detail is dropped when it only repeats it."""
    refused = SystemStatus(connected=False, state="refused", detail="401 Unauthorized", hint="check the key")
    assert (service_heading(refused), service_detail(refused)) == ("Refused", "401 Unauthorized")
    assert service_heading(SystemStatus(connected=True, state="ok", detail="ok")) == "OK"
    assert service_detail(SystemStatus(connected=True, state="ok", detail="ok")) == ""
    assert service_heading(SystemStatus(enabled=False)) == "Not configured"
    assert service_heading(SystemStatus(connected=True, state="misconfigured")) == "Misconfigured"
    assert service_heading(SystemStatus(connected=False, detail="connection refused")) == "Unreachable"
    for status in (refused, SystemStatus(), SystemStatus(enabled=False), SystemStatus(connected=True)):
        assert service_heading(status).casefold() == service_state(status).casefold()
