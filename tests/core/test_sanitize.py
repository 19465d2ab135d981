"""Path component sanitization: a table of known cases and properties over arbitrary Unicode."""

from __future__ import annotations

import unicodedata
from pathlib import PurePosixPath

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jellybit.core.sanitize import (
    MAX_COMPONENT_BYTES,
    clean_text,
    is_sanitized,
    is_within,
    sanitize_component,
    sanitize_filename,
    truncate_utf8,
)

# Jellyfin docs (media/movies, media/shows header): "< > : \" / \ | ? *" are known to cause issues.
FORBIDDEN = set('<>:"/\\|?*')
RESERVED = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"} | {
    f"{p}{n}" for p in ("COM", "LPT") for n in "123456789¹²³"
}
BIDI_AND_ZERO_WIDTH = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))] + [
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f",
]
TRICKY = [
    "..", ".", "/", "\\", "\x00", "\x1f", "\x7f", "\x85", "\x9b", "\u202e", "\u2066", "\u200b",
    "CON", "nul", "Com1", "LPT9", ":", " ", "  ", "\t", "\n", "\u3000", "\u00a0", "?", "*", "<", ">",
    "|", '"', "\ud800", "\udfff", "\ufffe", "Ё", "и\u0306", "千と千尋", "😀", "\u0301", "a" * 300,
    "ж" * 200, "/../", "..\\..", ".hidden", "trailing. ", "[tmdbid-1]",
]

tricky_text = st.lists(
    st.one_of(
        st.sampled_from(TRICKY),
        st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40),
        st.text(max_size=20),
    ),
    max_size=12,
).map("".join)
huge_text = st.text(min_size=100, max_size=3000)


def assert_safe_component(name: str) -> None:
    """Every property a target component must have."""
    assert isinstance(name, str)
    assert name, "empty component"
    assert len(name.encode("utf-8")) <= MAX_COMPONENT_BYTES
    assert name not in (".", "..")
    assert not FORBIDDEN & set(name), name
    for ch in name:
        cat = unicodedata.category(ch)
        assert cat not in ("Cc", "Cf", "Cs", "Zl", "Zp"), (name, hex(ord(ch)))
    assert not name.startswith((" ", ".")), name
    assert not name.endswith((" ", ".")), name
    assert "  " not in name
    assert name.partition(".")[0].rstrip(" ").upper() not in RESERVED, name
    assert unicodedata.is_normalized("NFC", name)


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
