"""Comparing titles: normalization (case, diacritics, punctuation), transliteration, a distance in [0, 1]."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from difflib import SequenceMatcher

# Russian, Ukrainian and Belarusian letters in a common (BGN/PCGN-like) Latin spelling.
_CYRILLIC = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "zh", "з": "z", "и": "i",
    "й": "y", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t",
    "у": "u", "ф": "f", "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "", "ы": "y",
    "ь": "", "э": "e", "ю": "yu", "я": "ya", "і": "i", "ї": "yi", "є": "ye", "ґ": "g", "ў": "u",
}
_CYRILLIC_RE = re.compile(r"[\u0400-\u04ff]")
_LATIN_RE = re.compile(r"[a-z]")
_PUNCT = re.compile(r"[^\w\s]|_")
PREFIX_DISTANCE = 0.2       # a title that is the start of the other one ("Title: Subtitle")
_ARTICLE = re.compile(r"^(?:the|a|an|der|die|das|le|la|les|el|los|il)\s+")


def _strip_marks(text: str) -> str:
    """Drop diacritics from Latin (and other) letters; Cyrillic й and ё keep theirs (they are letters)."""
    out = []
    for char in text:
        if _CYRILLIC_RE.match(char):
            out.append(char)
        else:
            out.extend(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def normalize_title(text: str) -> str:
    """Case-folded, without diacritics or punctuation, `&` as `and`, spaces collapsed."""
    folded = unicodedata.normalize("NFC", text).casefold().replace("&", " and ")
    return " ".join(_PUNCT.sub(" ", _strip_marks(folded)).split())


def transliterate(text: str) -> str:
    """Cyrillic letters in Latin spelling (other characters unchanged); expects normalized text."""
    return "".join(_CYRILLIC.get(c, c) for c in text)


def _ratio(a: str, b: str) -> float:
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


@functools.lru_cache(maxsize=16384)
def name_distance(a: str, b: str) -> float:
    """Distance between two titles: 0 = the same name, 1 = nothing in common."""
    x, y = normalize_title(a), normalize_title(b)
    if not x or not y:
        return 1.0
    if bool(_CYRILLIC_RE.search(x)) != bool(_CYRILLIC_RE.search(y)):
        # "Фарго" and "Fargo" are the same name in two scripts: compare them in Latin letters.
        x, y = transliterate(x), transliterate(y)
    best = _ratio(x, y)
    short, long = sorted((x, y), key=len)
    if long.startswith(short + " ") and len(short) >= 4:
        best = max(best, 1.0 - PREFIX_DISTANCE)       # "Boruto" for "Boruto: Naruto Next Generations"
    bare_x, bare_y = _ARTICLE.sub("", x), _ARTICLE.sub("", y)
    if (bare_x, bare_y) != (x, y):
        best = max(best, _ratio(bare_x, bare_y) - 0.02)   # a missing article is nearly the same title
    return round(1.0 - best, 4)


def titles_distance(ours: Iterable[str | None], theirs: Iterable[str | None]) -> tuple[float, str, str]:
    """The closest pair between two sets of names: (distance, our name, their name)."""
    mine = [t for t in dict.fromkeys(ours) if t]
    other = [t for t in dict.fromkeys(theirs) if t]
    best = (1.0, mine[0] if mine else "", other[0] if other else "")
    for a in mine:
        for b in other:
            d = name_distance(a, b)
            if d < best[0]:
                best = (d, a, b)
                if d == 0.0:
                    return best
    return best
