"""`jellybit show` for a movie pack: each film with its own match, sureness, reasons and candidates."""

from __future__ import annotations

from jellybit.cli.show import candidate_by_number, review_block
from jellybit.protocol import DownloadDetail

DOWNLOAD = {"id": "01jf0000000000000000000000", "name": "Tarkovsky.Duology", "state": "review",
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}


def detail() -> DownloadDetail:
    """A duology in review: Stalker is sure, Solaris has two candidates."""
    return DownloadDetail.model_validate({"download": DOWNLOAD, "recognition": {
        "id": "01jf0000000000000000000001", "attempt_no": 1, "media_type": "movie",
        "reasons": [{"code": "film_uncertain", "blocking": True,
                     "message": "1 of 2 films need a human ('Solaris': small_margin)"}],
        "candidates": [
            {"id": "c1", "provider": "tmdb", "provider_id": "593", "title": "Solaris", "year": 1972,
             "media_type": "movie", "film": "T/Solaris.mkv"},
            {"id": "c2", "provider": "tmdb", "provider_id": "2103", "title": "Solaris", "year": 2002,
             "media_type": "movie", "film": "T/Solaris.mkv", "chosen": True},
            {"id": "c3", "provider": "tmdb", "provider_id": "1398", "title": "Stalker", "year": 1979,
             "media_type": "movie", "film": "T/Stalker.1979.mkv", "chosen": True}],
        "recommended": "c2",
        "films": [
            {"key": "T/Solaris.mkv", "title": "Solaris", "sources": ["T/Solaris.mkv"], "provider": "tmdb",
             "provider_id": "2103", "match_title": "Solaris", "match_year": 2002, "confidence": 0.85,
             "recommendation": "medium", "confirmed": False,
             "reasons": [{"code": "small_margin", "message": "'Solaris' (2002) is only 0.01 ahead",
                          "blocking": True}]},
            {"key": "T/Stalker.1979.mkv", "title": "Stalker", "year": 1979, "sources": ["T/Stalker.1979.mkv"],
             "provider": "tmdb", "provider_id": "1398", "match_title": "Stalker", "match_year": 1979,
             "confidence": 1.0, "recommendation": "strong", "confirmed": True}]}})


def test_a_pack_in_review_is_shown_film_by_film() -> None:
    text = "\n".join(review_block(detail()))
    assert "Solaris → Solaris (2002) · tmdb 2103  [needs a human, confidence 0.85]" in text
    assert "Stalker (1979) → Stalker (1979) · tmdb 1398  [sure, confidence 1.00]" in text
    assert "[blocks] 'Solaris' (2002) is only 0.01 ahead" in text
    solaris, stalker = text.index("Solaris →"), text.index("Stalker (1979) →")
    # only the unsure film lists its candidates, numbered as `--candidate N` takes them
    assert solaris < text.index("1. Solaris · 1972 · film") < text.index("2. Solaris · 2002 · film") < stalker
    assert "3. Stalker" not in text
    assert candidate_by_number(detail(), 1) == "c1"
