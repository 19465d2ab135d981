"""What the completed files change about a decision taken while they downloaded (core/arrival.py)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.arrival import decision_changes, new_blockers, recognized_early, waits_for_bytes
from jellybit.core.reasons import reason
from jellybit.core.records import MediaType, Plan, PlanItem, RecognitionDraft, Role

VIDEO = "Show.S01E01.mkv"
SUBTITLE = "Show.S01E01.srt"


def draft(*items: PlanItem, provider_id: str = "81189", reasons: tuple = ()) -> RecognitionDraft:
    """A season recognition matched at TVDB."""
    return RecognitionDraft(MediaType.SERIES, "Show", 2008, Plan(items), provider="tvdb",
                            provider_id=provider_id, reasons=reasons)


def episode(source: str, number: int) -> PlanItem:
    return PlanItem(source, 1000, Role.VIDEO, season=1, episodes=(number,))


def subtitle(language: str | None = None) -> PlanItem:
    return PlanItem(SUBTITLE, 10, Role.SUBTITLE, language=language, attached_to=VIDEO)


def test_what_the_bytes_only_fill_in_is_no_change() -> None:
    before = draft(episode(VIDEO, 1), subtitle(), reasons=(reason("files_pending", "1 of 2 files"),))
    after = draft(episode(VIDEO, 1), replace(subtitle("en"), flags=("sdh",), note="detected from its text"))
    assert decision_changes(before, after) == []
    assert recognized_early(before)
    assert not recognized_early(after)


def test_another_work_a_renumbered_video_a_file_gone_and_a_new_blocker_are_changes() -> None:
    before = draft(episode(VIDEO, 1), episode("Show.S01E02.mkv", 2))
    after = draft(episode(VIDEO, 3), provider_id="1", reasons=(
        reason("collision", "a different file already holds: Show S01E03.mkv"),
        reason("subtitle_language_unknown", "a note, not a blocker")))
    changes = decision_changes(before, after)
    assert changes == [
        "it now reads as 'Show' (2008) [tvdb 1], not 'Show' (2008) [tvdb 81189]",
        "'Show.S01E01.mkv' is now S01E03, not S01E01",
        "'Show.S01E02.mkv' is no longer part of the download (deselected in qBittorrent?)",
        "a different file already holds: Show S01E03.mkv",
    ]


def test_a_blocker_the_decision_already_had_is_not_new() -> None:
    held = (reason("small_margin", "the runner-up is close"),)
    assert new_blockers(held, (*held, reason("files_pending", "still downloading"))) == []
    assert [r.code for r in new_blockers(held, (reason("source_missing", "gone"),))] == ["source_missing"]


def test_a_video_that_becomes_a_sample_is_a_change() -> None:
    before = draft(episode(VIDEO, 1))
    after = draft(PlanItem(VIDEO, 1000, Role.SAMPLE))
    assert decision_changes(before, after) == [f"'{VIDEO}' now reads as sample, not video"]


def test_only_an_untagged_text_subtitle_waits_for_its_bytes() -> None:
    assert waits_for_bytes(subtitle())
    assert not waits_for_bytes(subtitle("en"))
    assert not waits_for_bytes(replace(subtitle(), source="Show.S01E01.sup"))     # a picture: no text
    assert not waits_for_bytes(replace(subtitle(), attached_to=None))            # left out anyway
    assert not waits_for_bytes(episode(VIDEO, 1))


@given(st.lists(st.integers(1, 40), min_size=1, max_size=8, unique=True))
def test_a_recognition_never_changes_against_itself(numbers: list[int]) -> None:
    same = draft(*(episode(f"Show.S01E{n:02d}.mkv", n) for n in numbers))
    assert decision_changes(same, same) == []
