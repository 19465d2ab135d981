"""Whether a word of the user's names a person or a title: across scripts, Russian endings and spellings.

`Тарантино` is Quentin Tarantino, `Нолана` (genitive) is Christopher Nolan, `Скорсезе` is Martin
Scorsese: the word is transliterated, a Russian case ending may be dropped, and both sides are
compared by a rough spelling key (c/k, z/s, doubled letters) so transliteration's choices do not
matter. Pure and total.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher

from jellybit.core.title_match import normalize_title, transliterate

# Russian noun and adjective endings, longest first; a stem keeps at least MIN_STEM letters.
_ENDINGS = ("ами", "ями", "ого", "его", "ому", "ему", "ыми", "ими", "ой", "ей", "ом", "ем", "ам", "ям",
            "ах", "ях", "ую", "юю", "ая", "яя", "ое", "ее", "ые", "ие", "ый", "ий", "ым", "им",
            "а", "я", "у", "ю", "е", "ы", "и", "о")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_KEY = (("shch", "sh"), ("ck", "k"), ("ph", "f"), ("th", "t"), ("kh", "h"), ("c", "k"), ("q", "k"),
        ("z", "s"), ("w", "v"), ("y", "i"), ("j", "i"), ("x", "ks"))
MIN_STEM = 3
CLOSE = 0.85                  # the spelling keys' similarity at which two long words are one name
MIN_CLOSE_LENGTH = 6


def spelling_key(word: str) -> str:
    """A rough key of a Latin word that ignores transliteration's choices (`skorseze` = `scorsese`)."""
    key = word.lower()
    for old, new in _KEY:
        key = key.replace(old, new)
    return re.sub(r"(.)\1+", r"\1", key)


def forms(word: str) -> tuple[str, ...]:
    """The word's spelling keys: as written and, for Russian, without a case ending."""
    normal = normalize_title(word)
    found = [normal]
    if _CYRILLIC.search(normal):
        found += [normal[: -len(e)] for e in _ENDINGS
                  if normal.endswith(e) and len(normal) - len(e) >= MIN_STEM]
    return tuple(dict.fromkeys(spelling_key(transliterate(f)) for f in found if f))


def name_keys(names: Iterable[str]) -> frozenset[str]:
    """The spelling keys of every word of these names."""
    return frozenset(spelling_key(transliterate(part)) for name in names
                     for part in normalize_title(name).split() if part)


def matches(word: str, keys: frozenset[str]) -> bool:
    """Whether every part of `word` is one of the names' words (a case ending or a spelling aside)."""
    parts = normalize_title(word).split()
    return bool(parts) and all(_part_matches(p, keys) for p in parts)


def _part_matches(part: str, keys: frozenset[str]) -> bool:
    for form in forms(part):
        if form in keys:
            return True
        if len(form) >= MIN_CLOSE_LENGTH and any(
                abs(len(k) - len(form)) <= 2 and SequenceMatcher(None, form, k).ratio() >= CLOSE
                for k in keys):
            return True
    return False


def who(word: str, names: Iterable[str]) -> str | None:
    """The first of `names` one of whose words `word` matches, for the review's message."""
    return next((name for name in names if matches(word, name_keys([name]))), None)
