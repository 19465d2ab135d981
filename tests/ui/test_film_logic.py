"""The panel's movie-pack choices: preselected per film, pinned only for the films a human decided."""

from __future__ import annotations

from jellybit.protocol import RecognitionDetail
from ui.pages.film_sections import pins, preselected


def pack() -> RecognitionDetail:
    """A duology: Stalker is sure, Solaris is not; each film has its own candidates."""
    return RecognitionDetail.model_validate({
        "id": "r", "attempt_no": 1, "media_type": "movie",
        "candidates": [
            {"id": "c1", "provider": "tmdb", "provider_id": "593", "title": "Solaris",
             "film": "T/Solaris.mkv"},
            {"id": "c2", "provider": "tmdb", "provider_id": "2103", "title": "Solaris",
             "film": "T/Solaris.mkv", "chosen": True},
            {"id": "c3", "provider": "tmdb", "provider_id": "1398", "title": "Stalker",
             "film": "T/Stalker.mkv", "chosen": True}],
        "films": [
            {"key": "T/Solaris.mkv", "title": "Solaris", "sources": ["T/Solaris.mkv", "T/Solaris.2.mkv"],
             "confirmed": False},
            {"key": "T/Stalker.mkv", "title": "Stalker", "sources": ["T/Stalker.mkv"], "confirmed": True}]})


def test_each_film_opens_with_the_workers_pick() -> None:
    assert preselected(pack()) == {"T/Solaris.mkv": "c2", "T/Stalker.mkv": "c3"}


def test_only_the_unsure_films_are_pinned_on_every_one_of_their_files() -> None:
    assert pins(pack(), {"T/Solaris.mkv": "c1", "T/Stalker.mkv": "c3"}) == {
        "T/Solaris.mkv": {"provider": "tmdb", "provider_id": "593"},
        "T/Solaris.2.mkv": {"provider": "tmdb", "provider_id": "593"}}
    assert pins(pack(), {"T/Solaris.mkv": "not-offered"}) == {}
    assert pins(None, {}) == {}
