"""Hypothesis strategies and checks for path components, shared by the naming and path tests."""

from __future__ import annotations

import unicodedata

from hypothesis import strategies as st

from jellybit.core.sanitize import MAX_COMPONENT_BYTES

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
