"""Country codes: one normalization for names, providers and contexts; country tags ending titles."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.countries import ALPHA2, country_code, split_country


@pytest.mark.parametrize(("value", "expected"), [
    ("US", "US"), ("us", "US"), ("usa", "US"), ("USA", "US"), ("UK", "GB"), ("gbr", "GB"), ("GB", "GB"),
    ("dnk", "DK"), (" de ", "DE"), ("United States", "US"), ("united kingdom", "GB"), ("Britain", "GB"),
    ("EL", "GR"), ("zz", None), ("", None), (None, None), ("xxx", None), ("United", None),
])
def test_country_code(value: object, expected: str | None) -> None:
    assert country_code(value) == expected


@pytest.mark.parametrize(("title", "expected"), [
    ("House of Cards US", ("House of Cards", "US")),
    ("The Office (US)", ("The Office", "US")),
    ("Shameless (UK)", ("Shameless", "GB")),
    ("Forbrydelsen [DK]", ("Forbrydelsen", "DK")),
    ("Utopia (AU)", ("Utopia", "AU")),
    ("House of Cards (1990)", ("House of Cards (1990)", None)),
    ("Stand by Me", ("Stand by Me", None)),             # a bare word counts only from a short list
    ("Save Us", ("Save Us", None)),                     # and only in capitals
    ("Us", ("Us", None)),                               # nothing left without it
    ("Show (TV)", ("Show (TV)", None)),                 # (TV), [BD], (SD) are not countries here
    ("[Grp] Kemono Tales - 12 (BD)", ("[Grp] Kemono Tales - 12 (BD)", None)),
    ("Шерлок (UK)", ("Шерлок", "GB")),
])
def test_split_country(title: str, expected: tuple[str, str | None]) -> None:
    assert split_country(title) == expected


@given(st.text(max_size=300))
def test_country_parsing_is_total(text: str) -> None:
    code = country_code(text)
    assert code is None or code in ALPHA2
    base, tag = split_country(text)
    assert tag is None or tag in ALPHA2
    assert base == text if tag is None else (base and text.startswith(base) and len(base) < len(text))


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=80), st.sampled_from(["US", "UK", "DK"]))
def test_a_bracketed_code_is_always_read(base: str, code: str) -> None:
    if not base.rstrip().rstrip(" -–:,."):
        return                                          # nothing would be left of the title
    found_base, tag = split_country(f"{base} ({code})")
    assert tag == country_code(code)
    assert found_base
