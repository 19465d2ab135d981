"""Evidence on every candidate of a real recognition (the providers' fakes): what agrees, what does not."""

from __future__ import annotations

from typing import Any

from jellybit.adapters.store import Store
from jellybit.core.models import NewDownload
from jellybit.transports.payloads import candidate_rows
from tests.engine.test_recognizer import GB, recognizer, request


def texts(candidate: Any) -> dict[str, tuple[str, str | None]]:
    return {e["text"]: (e["verdict"], e["source"]) for e in candidate.details["evidence"]}


async def test_the_users_country_is_checked_on_both_shows_of_one_name(providers: list[Any]) -> None:
    name = "Shameless.S05E03.720p.HDTV"
    draft = await recognizer(None, providers).recognize(
        request(name, [(f"{name}.mkv", GB)], context="the American version"))
    us = next(c for c in draft.candidates if c.provider_id == "161511")
    uk = next(c for c in draft.candidates if c.provider_id == "79044")
    assert texts(us)["country US"] == ("match", "your context")
    assert texts(uk)["country GB; your context says US"] == ("mismatch", "your context")
    assert texts(us)["title “Shameless”"] == ("match", None)
    # One episode of season 5: the provider's count of that season, and how many the torrent has.
    (season,) = [t for t in texts(us) if t.startswith("season 5 has")]
    assert season.endswith("episodes; the torrent has 1")


async def test_a_year_in_the_name_is_checked_against_the_first_aired_year(providers: list[Any]) -> None:
    name = "Shameless.2011.S01E01.720p.HDTV"
    draft = await recognizer(None, providers).recognize(request(name, [(f"{name}.mkv", GB)]))
    (chosen,) = [c for c in draft.candidates if c.chosen]
    assert chosen.provider_id == "161511"
    assert texts(chosen)["first aired 2011"] == ("match", None)
    assert all(verdict != "mismatch" for verdict, _ in texts(chosen).values())


async def test_evidence_survives_the_store_and_reaches_the_review_payload(
    providers: list[Any], store: Store,
) -> None:
    name = "Shameless.S05E03.720p.HDTV"
    draft = await recognizer(None, providers).recognize(
        request(name, [(f"{name}.mkv", GB)], context="британская версия"))
    created = await store.create_download_if_no_active(NewDownload("magnet", name, "m", ""))
    saved = await store.save_recognition(created.download.id, draft)
    rows = {row.provider_id: row for row in candidate_rows(saved)}
    uk = {e.text: e for e in rows["79044"].evidence}
    assert uk["country GB"].verdict == "match"
    assert uk["country GB"].source == "your context"
    assert rows["79044"].seasons["5"] > 0
