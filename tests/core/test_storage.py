"""The storage fault table: every code has its words, its meaning, its documentation and its panel label."""

from __future__ import annotations

from pathlib import Path

import pytest

from jellybit.core.reasons import PENALTIES
from jellybit.core.storage import (
    LIBRARY_CODES,
    MEANINGS,
    Place,
    StorageCode,
    library_component,
    recovered,
    words,
)
from ui.pages.status import STORAGE, STORAGE_LABELS

DOCS = Path(__file__).resolve().parents[2] / "docs"
DATABASE = Place("database", "/srv/db/jellybit.db", "/srv/db")
SERIES = Place(library_component("series"), "/srv/media/series", "/srv/media")


@pytest.mark.parametrize("code", list(StorageCode))
def test_every_code_says_where_and_what_to_do(code: StorageCode) -> None:
    place = SERIES if code in LIBRARY_CODES else DATABASE
    text = words(code, place)
    assert place.path in text
    assert MEANINGS[code]
    if code in (StorageCode.STORAGE_FULL, StorageCode.LIBRARY_FULL):
        assert f"free space on {place.mount}" in text
    if code in LIBRARY_CODES:
        assert text.startswith("the series library ")
        assert PENALTIES[code.value].blocking          # a layout into it waits in review
    assert recovered(place).endswith(f"works again ({place.path})")


def test_the_brief_s_example_reads_as_written() -> None:
    assert words(StorageCode.STORAGE_FULL, DATABASE).startswith(
        "the database disk is full (/srv/db/jellybit.db); free space on /srv/db")


def test_a_library_place_knows_its_library() -> None:
    assert SERIES.library == "series"
    assert DATABASE.library is None


def test_every_code_is_documented_and_labelled_in_the_panel() -> None:
    api = (DOCS / "mqtt-api.md").read_text(encoding="utf-8")
    recognition = (DOCS / "recognition.md").read_text(encoding="utf-8")
    for code in StorageCode:
        assert f"`{code.value}`" in api, code
        assert code.value in STORAGE_LABELS, code
    for code in LIBRARY_CODES:
        assert f"`{code.value}`" in recognition, code
    assert set(STORAGE) == {"database", library_component("movies"), library_component("series")}
