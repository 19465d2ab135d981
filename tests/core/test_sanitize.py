"""Path component sanitization: a table of known cases and properties over arbitrary Unicode."""

from __future__ import annotations

import unicodedata
from pathlib import PurePosixPath

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jellybit.core.sanitize import (
    _clean_ascii,
    _settle,
    _settle_passes,
    clean_text,
    is_sanitized,
    is_within,
    sanitize_component,
    sanitize_filename,
    truncate_utf8,
)
from tests.support.path_props import RESERVED, assert_safe_component, huge_text, tricky_text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Breaking Bad", "Breaking Bad"),
        ("Mission: Impossible", "Mission - Impossible"),   # ':' is forbidden (Jellyfin docs)
        ("10:30", "10-30"),
        ("AC/DC", "AC-DC"),
        ("Face\\Off", "Face-Off"),
        ('Say "Hi"', "Say 'Hi'"),
        ("What If...?", "What If"),                         # '?' goes, then trailing dots
        ("M*A*S*H", "MASH"),
        ("a<b>c|d", "abc-d"),
        ("..", "_"),
        (".", "_"),
        ("", "_"),
        ("   ", "_"),
        ("/", "-"),
        (".hack", "hack"),                                  # a leading dot hides the folder in Jellyfin
        ("  lead and trail . . ", "lead and trail"),
        ("tab\tand\nnewline", "tab and newline"),
        ("many     spaces", "many spaces"),
        ("nul\x00byte", "nulbyte"),
        ("bidi\u202eevil\u202c.txt", "bidievil.txt"),
        ("zero\u200bwidth", "zerowidth"),
        ("c1\x85\x9bcontrol", "c1 control"),                  # NEL is a line break: a space
        ("CON", "CON_"),
        ("con.srt", "con_.srt"),
        ("NUL .txt", "NUL_.txt"),
        ("COM1", "COM1_"),
        ("lpt9.mkv", "lpt9_.mkv"),
        ("COM10", "COM10"),                                 # not reserved
        ("CONSOLE", "CONSOLE"),
        ("Бригада (2002)", "Бригада (2002)"),
        ("千と千尋の神隠し (2001)", "千と千尋の神隠し (2001)"),
        ("Ёлки", "Ёлки"),
        ("Е\u0308лки", "Ёлки"),                              # NFC composes
        ("non\u00a0breaking", "non breaking"),
        ("ideographic\u3000space", "ideographic space"),
    ],
)
def test_sanitize_component_table(raw: str, expected: str) -> None:
    assert sanitize_component(raw) == expected
    assert_safe_component(sanitize_component(raw))


def test_fallback_is_used_and_itself_sanitized() -> None:
    assert sanitize_component("..", fallback="Untitled") == "Untitled"
    assert sanitize_component("", fallback="..") == "_"
    assert sanitize_component("", fallback="CON") == "CON_"
    assert clean_text("..") == ""


def test_truncates_to_255_bytes_without_splitting_characters() -> None:
    name = sanitize_component("ж" * 300)             # 2 bytes each
    assert len(name.encode()) == 254
    assert name == "ж" * 127
    name = sanitize_component("😀" * 100)            # 4 bytes each
    assert len(name.encode()) == 252
    assert truncate_utf8("aжb", 2) == "a"
    assert truncate_utf8("abc", 0) == ""


def test_truncation_never_ends_in_a_dot_or_space() -> None:
    name = sanitize_component("a" * 254 + " b")
    assert name == "a" * 254
    name = sanitize_component("a" * 254 + ".b")
    assert name == "a" * 254


def test_sanitize_filename_keeps_the_extension() -> None:
    assert sanitize_filename("Movie (2020)", ".mkv") == "Movie (2020).mkv"
    long = sanitize_filename("ж" * 300, ".en.forced.srt")
    assert long.endswith(".en.forced.srt")
    assert len(long.encode()) <= 255
    assert sanitize_filename("CON", ".srt") == "CON_.srt"
    assert sanitize_filename("..", ".mkv") == "_.mkv"
    assert sanitize_filename("Mr.", ".mkv") == "Mr.mkv"
    assert sanitize_filename("a", "../../x") == "a.-..-x"


def test_is_within_is_strict_and_lexical() -> None:
    root = PurePosixPath("/srv/media/movies")
    assert is_within(root, root / "A (2020)" / "A (2020).mkv")
    assert not is_within(root, root)
    assert not is_within(root, PurePosixPath("/srv/media/movies2/x"))
    assert not is_within(root, root / ".." / "series" / "x")
    assert not is_within(root, PurePosixPath("A/x.mkv"))
    assert is_within(PurePosixPath("lib"), PurePosixPath("lib/x"))


@settings(max_examples=300, deadline=None)
@given(tricky_text)
@example("..")
@example("\u202e..\u202c")
@example("CON.")
@example("." * 300)
@example("a" * 254 + "\u0301" * 10)
def test_any_text_gives_a_safe_component(text: str) -> None:
    name = sanitize_component(text)
    assert_safe_component(name)
    assert sanitize_component(name) == name        # idempotent: the containment gate relies on it
    assert is_sanitized(name)


@settings(max_examples=100, deadline=None)
@given(huge_text, st.sampled_from(["", ".mkv", ".en.sdh.srt", ".dvr-ms", "." + "x" * 300]))
def test_any_filename_is_safe(stem: str, ext: str) -> None:
    name = sanitize_filename(stem, ext)
    assert_safe_component(name)
    assert sanitize_component(name) == name


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.characters(categories=("L", "N")).filter(lambda c: unicodedata.is_normalized("NFC", c)),
        min_size=1,
        max_size=60,
    )
)
def test_letters_and_digits_of_any_script_survive(text: str) -> None:
    # Cyrillic, CJK, Arabic, ... come out untouched when there is nothing to remove.
    text = unicodedata.normalize("NFC", text)
    base = text.partition(".")[0].upper()
    if base in RESERVED:
        return
    assert sanitize_component(text) == text


_PIECES = [*' .:/\\|<>"?*-_abcXYZ09', "CON", "nul", "COM1", "LPT9", "  ", "\t"]
_ascii_names = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


@given(st.one_of(_ascii_names, tricky_text, st.text()), st.integers(min_value=-2, max_value=300))
@example("CON .srt", 255)
@example("a" * 256, 255)
@example("a  b", 255)
@example("ab.", 255)
@example("nul", 255)
@example("Show S01E01.mkv", 255)
def test_the_clean_ascii_shortcut_agrees_with_the_full_passes(text, max_bytes):
    assert _settle(text, max_bytes) == _settle_passes(text, max_bytes)
    if _clean_ascii(text, max_bytes):
        assert _settle_passes(text, max_bytes) == text
