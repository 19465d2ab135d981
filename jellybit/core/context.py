"""A rule-based reader of a user's context and hints: what the words plainly state, and what they do not.

`read_context("второй сезон датской версии, русская озвучка")` reads season 2, country DK and
Russian audio; every other word is either a filler (`the`, `version`, `это`…) or returned in
`unused`, in its original spelling. The words are in `core/context_words.py`. Pure, total (never
raises, on any text) and fast: a fixed set of regular expressions, no per-word parsing.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from jellybit.core.context_words import TERMS
from jellybit.core.limits import (  # as ingest accepts it; anything longer is cut here too
    MAX_CONTEXT_CHARS,
    MAX_READ_EPISODE,
    MAX_READ_SEASON,
)
from jellybit.core.providers import Provider, facts, provider_name, words

MAX_TITLE_CHARS = 200
MAX_SHOWN_CHARS = 80             # the words a finding came from, as a message quotes them
YEARS = (1870, 2200)


@dataclass(frozen=True)
class Finding:
    """One thing the words state, with the words it came from (original spelling)."""

    what: str                    # season | episode | year | media_type | anime | country |
    value: str | int             # audio_language | subtitle_language | provider | imdb | title
    words: str

    def describe(self) -> str:
        """`season 2 (“второй сезон”)` for a human."""
        if self.what == "title":
            return _DESCRIBE["title"](self.value)
        words = self.words if len(self.words) <= MAX_SHOWN_CHARS else self.words[:MAX_SHOWN_CHARS - 1] + "…"
        return f"{_DESCRIBE[self.what](self.value)} (“{words}”)"


_DESCRIBE: dict[str, Callable[[str | int], str]] = {
    "season": lambda v: f"season {v}", "episode": lambda v: f"episode {v}", "year": lambda v: f"year {v}",
    "media_type": lambda v: f"a {v}", "anime": lambda v: "anime", "country": lambda v: f"country {v}",
    "audio_language": lambda v: f"audio language {v}",
    "subtitle_language": lambda v: f"subtitle language {v}",
    "provider": lambda v: _provider_label(str(v)),
    "imdb": lambda v: f"{provider_name(Provider.IMDB)} {v}",
    "title": lambda v: f"title “{v}”" if len(str(v)) <= MAX_SHOWN_CHARS else f"title “{str(v)[:79]}…”",
}


def _provider_label(value: str) -> str:
    """`tmdb:series:2316` → `TMDB 2316 (series)`."""
    provider, kind, ident = [*value.split(":"), "", ""][:3]
    shown = f" ({kind})" if kind and _listed_kind(provider) is None else ""   # else it lists one kind only
    return f"{provider_name(provider)} {ident}{shown}"


def _listed_kind(provider: str) -> str | None:
    """The one media type a provider lists ('series' for TVDB), None when it lists several."""
    known = facts(provider)
    return next(iter(known.searched)).value if known and len(known.searched) == 1 else None


@dataclass(frozen=True)
class ContextReading:
    """What one text states plainly (None: it says nothing about that), and the words left unread."""

    media_type: str | None = None            # movie | series
    anime: bool = False
    year: int | None = None
    season: int | None = None
    episode: int | None = None
    country: str | None = None               # ISO 3166-1 alpha-2 (UK is GB)
    audio_languages: tuple[str, ...] = ()    # ISO 639-1, preferences
    subtitle_languages: tuple[str, ...] = ()
    provider: str | None = None              # tmdb | tvdb | tvmaze
    provider_id: str | None = None
    provider_kind: str | None = None         # movie | series when a URL says which
    imdb: str | None = None                  # tt0386676
    titles: tuple[str, ...] = ()             # quoted titles, first = the title
    found: tuple[Finding, ...] = ()          # in the order of the text
    unused: tuple[str, ...] = ()             # words read as nothing, original spelling, in order
    ignored: tuple[Finding, ...] = ()        # a second, different value of a field (also unused)


# ------------------------------------------------------------------------------------------ patterns

def _alternatives(pattern: str) -> list[str]:
    """The top-level `|` branches of a pattern."""
    branches, depth, start, escaped = [], 0, 0, False
    for index, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "|" and depth == 0:
            branches.append(pattern[start:index])
            start = index + 1
    return [*branches, pattern[start:]]


def _joined(patterns: list[str]) -> str:
    # Longest spelling first, so that "tv series" is tried before "tv" at the same place.
    branches = [b for p in patterns for b in _alternatives(p)]
    return "|".join(f"(?:{b})" for b in sorted(dict.fromkeys(branches), key=len, reverse=True))


def _words(kind: str) -> str:
    return _joined([t.pattern for t in TERMS if t.kind == kind])


def _valued(kind: str) -> dict[str | int, str]:
    grouped: dict[str | int, list[str]] = defaultdict(list)
    for term in TERMS:
        if term.kind == kind and term.value is not None:
            grouped[term.value].append(term.pattern)
    return {value: _joined(patterns) for value, patterns in grouped.items()}


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w)(?:{pattern})(?!\w)", re.IGNORECASE)


def _compile_each(*patterns: str) -> tuple[re.Pattern[str], ...]:
    """One regex per branch: a branch that matches at the same place as another must not hide it."""
    return tuple(_compile(p) for p in patterns)


# control, zero-width and bidi characters, and lone surrogates (they cannot be encoded to send or store)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")
_TAIL = r"(?:[^\s\"'«»“”‘’„<>]*[^\s\"'«»“”‘’„<>.,;:!?)\]])?"
_URL_TMDB = re.compile(r"(?:https?://)?(?:www\.)?themoviedb\.org/(tv|movie)/(\d{1,10})" + _TAIL, re.I)
_URL_TVDB = re.compile(r"(?:https?://)?(?:www\.)?thetvdb\.com/(?:\S*?[?&]id=|(?:dereferrer/)?series/)"
                       r"(\d{1,10})(?![\w-])" + _TAIL, re.I)
_URL_TVMAZE = re.compile(r"(?:https?://)?(?:www\.)?tvmaze\.com/shows/(\d{1,10})" + _TAIL, re.I)
_URL_IMDB = re.compile(r"(?:https?://)?(?:www\.|m\.)?imdb\.com/title/(tt\d{7,10})" + _TAIL, re.I)
_IMDB_ID = _compile(r"(?:imdb(?:[\s_-]*id)?\s*[:#=-]?\s*)?(tt\d{7,10})")
_QUOTED = re.compile(r"\"([^\"\n]{1,300})\"|«([^»\n]{1,300})»|“([^”\n]{1,300})[”“]|„([^“”\n]{1,300})[“”]"
                     r"|‘([^’\n]{1,300})’|(?<!\w)'((?:[^'\n]|'(?=\w)){1,300}?)'(?!\w)")
_URL = re.compile(r"(?<![\w.-])(?:https?://|www\.|[\w-]+(?:\.[\w-]+)+/)" + _TAIL, re.IGNORECASE)
_WORD = re.compile(r"\w+(?:['’.-]\w+)*")

_SUFFIX = _words("ordinal_suffix")
_NUMBER_WORDS = _valued("number")
_YEAR_WORD = _words("year")


def _ordinal(prefix: str) -> str:
    return "|".join(f"(?P<{prefix}{n}>{p})" for n, p in _NUMBER_WORDS.items())


def _counted(word_kind: str, short: str) -> tuple[re.Pattern[str], ...]:
    """`season 2`, `2 сезон`, `2nd season`, `второй сезон`, `season two`, and a short form (`S02`)."""
    word = _words(word_kind)
    not_a_year = rf"(?!\s*(?:{_YEAR_WORD})(?!\w))"
    return _compile_each(rf"(?:{word})\s*(?:#|№|no\.?)?\s*(?P<after>\d{{1,4}}){not_a_year}",
                         rf"(?P<before>\d{{1,3}})(?:{_SUFFIX})?\s*(?:{word})",
                         rf"(?:{_ordinal('n')})\s+(?:{word})", rf"(?:{word})\s+(?:{_ordinal('m')})", short)


# `S2E1-10 of 10` (a tracker's title): season 2 and a range of its episodes, not episode 1
_SEASON = _counted("season", r"s(?P<short>\d{1,4})(?:\s*e(?P<episode>\d{1,5})"
                   r"(?P<range>\s*-\s*e?\d{1,5}(?:\s+(?:of|из)\s+\d{1,5})?)?)?")
_EPISODE = _counted("episode", r"e(?P<short>\d{1,5})")
_YEAR = _compile_each(rf"(?P<y>1[89]\d\d|2[0-2]\d\d)(?:\s*(?:{_YEAR_WORD}))?",
                      rf"(?:{_YEAR_WORD})\s*(?P<y>1[89]\d\d|2[0-2]\d\d)")
_LANG = "|".join(f"(?P<l_{v}>{p})" for v, p in _valued("language").items())
_LINK = _words("link")
_AUDIO, _SUBS = _words("audio"), _words("subtitles")
_LANGUAGE = _compile_each(
    rf"(?:{_LANG})\s+(?:(?:{_LINK})\s+)?(?:(?P<a>{_AUDIO})|(?P<s>{_SUBS}))",
    rf"(?:(?P<a>{_AUDIO})|(?P<s>{_SUBS}))\s+(?:(?:{_LINK})\s+)?(?:{_LANG})",
    rf"(?:{_LINK})\s+(?:{_LANG})")
_COUNTRY = _compile("|".join(f"(?P<c_{v}>(?:{p})(?:\\s+(?:{_words('version')}))?)"
                             for v, p in _valued("country").items()))
_MEDIA = _compile("|".join(f"(?P<m_{v}>{p})" for v, p in _valued("media").items()))
_NOT = {"movie": "series", "series": "movie"}
_NEGATED = _compile(rf"(?:{_words('negation')})\s+(?:(?:{_words('filler')})\s+)?(?:"
                    + "|".join(f"(?P<m_{v}>{p})" for v, p in _valued("media").items()) + ")")
_FILLER = _compile("|".join(_words(k) for k in ("filler", "link", "version")))


# ------------------------------------------------------------------------------------------ rules

@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    tier: int                        # 0: ids, 1: other links, 2: words; a lower tier wins
    findings: tuple[Finding, ...]


_TIER_WEIGHT = {0: 1_000_000, 1: 10_000, 2: 0}        # any text is at most 4,000 characters


def _each(patterns: tuple[re.Pattern[str], ...], text: str) -> Iterator[re.Match[str]]:
    for pattern in patterns:
        yield from pattern.finditer(text)


def _number(match: re.Match[str]) -> int | None:
    for name, value in match.groupdict().items():
        if not value or name == "episode":
            continue
        if name in ("after", "before", "short"):
            return int(value)
        return int(name[1:])             # n2 / m2: a number word
    return None


@functools.cache
def _provider_id(names: tuple[str, ...]) -> re.Pattern[str]:
    """'tvdb id 81189', 'themoviedb: 603': the words of the provider table before a number."""
    return _compile("(" + "|".join(map(re.escape, names)) + r")(?:[\s_-]*id)?\s*[:#=№-]?\s*(\d{1,10})")


def _hits(text: str) -> Iterator[_Hit]:
    def hit(m: re.Match[str], tier: int, *found: tuple[str, str | int]) -> _Hit:
        words = " ".join(m.group(0).split())
        return _Hit(m.start(), m.end(), tier, tuple(Finding(w, v, words) for w, v in found))

    for m in _URL_TMDB.finditer(text):
        kind = "series" if m.group(1).lower() == "tv" else "movie"
        yield hit(m, 0, ("provider", f"tmdb:{kind}:{int(m.group(2))}"))
    for m in _URL_TVDB.finditer(text):
        yield hit(m, 0, ("provider", f"tvdb:series:{int(m.group(1))}"))
    for m in _URL_TVMAZE.finditer(text):
        yield hit(m, 0, ("provider", f"tvmaze:series:{int(m.group(1))}"))
    for m in _URL_IMDB.finditer(text):
        yield hit(m, 0, ("imdb", m.group(1).lower()))
    named = words()
    for m in _provider_id(tuple(named)).finditer(text):
        provider = named[m.group(1).lower()]
        kind = _listed_kind(provider) or ""
        yield hit(m, 0, ("provider", f"{provider}:{kind}:{int(m.group(2))}"))
    for m in _IMDB_ID.finditer(text):
        yield hit(m, 0, ("imdb", m.group(1).lower()))
    for m in _URL.finditer(text):
        yield _Hit(m.start(), m.end(), 1, ())          # any other link: one word, never read inside
    for m in _QUOTED.finditer(text):
        title = " ".join(next(g for g in m.groups() if g is not None).split())[:MAX_TITLE_CHARS]
        if title.strip(" .,;:!?-"):
            yield hit(m, 2, ("title", title))
    yield from _numbered(text, hit)
    for m in _each(_LANGUAGE, text):
        groups = {k: v for k, v in m.groupdict().items() if v}
        code = next(k[2:] for k in groups if k.startswith("l_"))
        yield hit(m, 2, ("subtitle_language" if "s" in groups else "audio_language", code))
    for m in _COUNTRY.finditer(text):
        yield hit(m, 2, ("country", next(k[2:] for k, v in m.groupdict().items() if v)))
    for m in _MEDIA.finditer(text):
        value = next(k[2:] for k, v in m.groupdict().items() if v)
        yield hit(m, 2, ("anime", 1) if value == "anime" else ("media_type", value))
    for m in _NEGATED.finditer(text):
        value = next(k[2:] for k, v in m.groupdict().items() if v)
        # "not anime" says nothing Jellybit uses: the phrase is reported as unused, not read as anime
        yield hit(m, 2, *([("media_type", _NOT[value])] if value in _NOT else []))


def _numbered(text: str, hit: Callable[..., _Hit]) -> Iterator[_Hit]:
    for m in _each(_SEASON, text):
        season = _number(m)
        found: list[tuple[str, str | int]] = [("season", season)] if season is not None else []
        if m.groupdict().get("episode") and not m.groupdict().get("range"):
            found.append(("episode", int(m.group("episode"))))
        yield hit(m, 2, *found)
    for m in _each(_EPISODE, text):
        episode = _number(m)
        yield hit(m, 2, *([("episode", episode)] if episode is not None else []))
    for m in _each(_YEAR, text):
        yield hit(m, 2, ("year", int(m.group("y"))))


def _select(hits: list[_Hit]) -> list[_Hit]:
    """The non-overlapping hits that cover the most text; ids outweigh links, links outweigh words.

    Weighted interval scheduling: "с русской озвучкой и английскими субтитрами" is read as
    "русской озвучкой" + "английскими субтитрами", not "с русской" + "озвучкой и английскими".
    """
    ordered = sorted(hits, key=lambda h: (h.end, h.start))
    ends = [h.end for h in ordered]
    best = [0]                       # best[i]: the most weight among the first i hits
    previous = [0]                   # the count of hits that end before hit i-1 starts (when taken)
    for index, found in enumerate(ordered):
        before = bisect.bisect_right(ends, found.start, 0, index)
        weight = best[before] + (found.end - found.start) + _TIER_WEIGHT[found.tier]
        best.append(max(best[index], weight))
        previous.append(before if weight > best[index] else -1)
    chosen, index = [], len(ordered)
    while index > 0:
        if previous[index] < 0:
            index -= 1
        else:
            chosen.append(ordered[index - 1])
            index = previous[index]
    return chosen[::-1]


# ------------------------------------------------------------------------------------------ reading

_SINGLE = ("media_type", "anime", "year", "season", "episode", "country", "provider", "imdb")
_RANGES = {"year": YEARS, "season": (0, MAX_READ_SEASON), "episode": (0, MAX_READ_EPISODE)}


def clean_context(text: object) -> str:
    """The text as read: a string, NFC, without control characters or lone surrogates, ≤ MAX_CONTEXT_CHARS."""
    if not isinstance(text, str):
        return ""
    return unicodedata.normalize("NFC", _CONTROL.sub(" ", text[:MAX_CONTEXT_CHARS]))[:MAX_CONTEXT_CHARS]


@functools.lru_cache(maxsize=256)
def read_context(text: str) -> ContextReading:
    """What the words plainly state (see the module docstring); never raises."""
    text = clean_context(text)
    taken = _select(list(_hits(text)))
    values: dict[str, str | int] = {}
    languages: dict[str, list[str]] = {"audio_language": [], "subtitle_language": []}
    titles: list[str] = []
    found: list[Finding] = []
    ignored: list[Finding] = []
    unused: list[str] = []
    cursor = 0
    for h in taken:
        unused.extend(_leftover(text[cursor:h.start]))
        cursor = h.end
        if not h.findings:
            unused.append(" ".join(text[h.start:h.end].split()))
            continue
        for finding in h.findings:
            low, high = _RANGES.get(finding.what, (None, None))
            if low is not None and not (isinstance(finding.value, int) and low <= finding.value <= high):
                unused.append(finding.words)
            elif finding.what in _SINGLE and values.get(finding.what, finding.value) != finding.value:
                ignored.append(finding)
                unused.append(finding.words)
            else:
                values.setdefault(finding.what, finding.value)
                if finding.what in languages and finding.value not in languages[finding.what]:
                    languages[finding.what].append(str(finding.value))
                if finding.what == "title" and finding.value not in titles:
                    titles.append(str(finding.value))
                found.append(finding)
    unused.extend(_leftover(text[cursor:]))
    return _reading(values, languages, titles, found, ignored, unused)


def _leftover(text: str) -> list[str]:
    """The words of text that were not read, fillers and punctuation left out."""
    return [w for w in _WORD.findall(text) if not _FILLER.fullmatch(w.replace("’", "'"))]


def _reading(values: dict[str, str | int], languages: dict[str, list[str]], titles: list[str],
             found: list[Finding], ignored: list[Finding], unused: list[str]) -> ContextReading:
    provider = str(values.get("provider", "")).split(":") if "provider" in values else [None, None, None]
    media_type = values.get("media_type")
    if media_type is None and "anime" in values:
        media_type = "series"
    words: dict[str, str] = {}
    for word in unused:
        words.setdefault(word.casefold(), word)
    return ContextReading(
        media_type=str(media_type) if media_type else None, anime="anime" in values,
        year=_int(values.get("year")), season=_int(values.get("season")), episode=_int(values.get("episode")),
        country=str(values["country"]) if "country" in values else None,
        audio_languages=tuple(languages["audio_language"]),
        subtitle_languages=tuple(languages["subtitle_language"]),
        provider=provider[0] or None, provider_id=provider[2] or None, provider_kind=provider[1] or None,
        imdb=str(values["imdb"]) if "imdb" in values else None, titles=tuple(titles),
        found=tuple(found), unused=tuple(words.values()), ignored=tuple(ignored),
    )


def _int(value: str | int | None) -> int | None:
    return value if isinstance(value, int) else None
