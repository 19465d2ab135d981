"""Language and flag words found in subtitle/audio names (ISO 639 codes, English and native names)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# One row per language: the code Jellybit writes (ISO 639-1 where one exists), then every spelling
# that means it in a file or folder name (ISO 639-2/B and /T codes, English and native names).
# Ambiguous 639-2/B codes that are also common English words (may, per, ice) are left out on purpose.
LANGUAGE_TABLE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("en", ("eng", "english", "анг", "англ", "английский", "английские", "anglais", "englisch", "inglés",
            "ingles", "inglese")),
    ("ru", ("rus", "russian", "рус", "русский", "русские", "русская", "русс", "russkij", "russe", "russo",
            "ruso", "russisch")),
    ("uk", ("ukr", "ua", "ukrainian", "украинский", "украинские", "українська", "укр")),
    ("be", ("bel", "belarusian", "беларуская", "белорусский")),
    ("de", ("ger", "deu", "german", "deutsch", "немецкий", "allemand", "alemán")),
    ("fr", ("fre", "fra", "french", "français", "francais", "французский", "francés")),
    ("es", ("spa", "spanish", "español", "espanol", "castellano", "испанский", "espagnol", "lat", "latino")),
    ("it", ("ita", "italian", "italiano", "итальянский")),
    ("pt", ("por", "portuguese", "português", "portugues", "португальский", "brazilian")),
    ("nl", ("dut", "nld", "dutch", "nederlands", "flemish")),
    ("sv", ("swe", "swedish", "svenska")),
    ("no", ("nor", "nob", "nno", "norwegian", "norsk", "nb")),
    ("da", ("dan", "danish", "dansk", "dk")),
    ("fi", ("fin", "finnish", "suomi")),
    ("is", ("isl", "icelandic", "íslenska")),
    ("pl", ("pol", "polish", "polski", "польский")),
    ("cs", ("cze", "ces", "czech", "čeština", "cestina", "cz")),
    ("sk", ("slo", "slk", "slovak", "slovenčina")),
    ("sl", ("slv", "slovenian", "slovene", "slovenščina")),
    ("hu", ("hun", "hungarian", "magyar")),
    ("ro", ("rum", "ron", "romanian", "română", "romana")),
    ("bg", ("bul", "bulgarian", "български")),
    ("sr", ("srp", "serbian", "srpski", "српски")),
    ("hr", ("hrv", "croatian", "hrvatski")),
    ("bs", ("bos", "bosnian", "bosanski")),
    ("mk", ("mac", "mkd", "macedonian", "македонски")),
    ("el", ("gre", "ell", "greek", "ελληνικά", "gr")),
    ("tr", ("tur", "turkish", "türkçe", "turkce")),
    ("he", ("heb", "hebrew", "עברית")),
    ("ar", ("ara", "arabic", "العربية")),
    ("fa", ("fas", "persian", "farsi", "فارسی")),
    ("hi", ("hin", "hindi", "हिन्दी")),
    ("bn", ("ben", "bengali", "বাংলা")),
    ("ta", ("tam", "tamil", "தமிழ்")),
    ("te", ("tel", "telugu")),
    ("th", ("tha", "thai", "ไทย")),
    ("vi", ("vie", "vietnamese", "tiếng việt")),
    ("id", ("ind", "indonesian", "bahasa")),
    ("ms", ("msa", "malay", "melayu")),
    ("ja", ("jpn", "jp", "japanese", "日本語", "日语", "日文", "японский")),
    ("ko", ("kor", "kr", "korean", "한국어", "корейский")),
    ("zh", ("chi", "zho", "chinese", "中文", "中字", "汉语", "cn", "китайский", "chs", "cht", "sc", "tc",
            "简体", "简中", "簡體", "繁体", "繁體", "繁中", "big5", "gb")),
    ("et", ("est", "estonian", "eesti")),
    ("lv", ("lav", "latvian", "latviešu")),
    ("lt", ("lit", "lithuanian", "lietuvių")),
    ("ka", ("geo", "kat", "georgian", "ქართული")),
    ("hy", ("arm", "hye", "armenian", "հայերեն")),
    ("kk", ("kaz", "kazakh", "қазақ", "казахский")),
    ("az", ("aze", "azerbaijani", "azərbaycan")),
    ("ca", ("cat", "catalan", "català")),
    ("eu", ("baq", "eus", "basque", "euskara")),
    ("gl", ("glg", "galician", "galego")),
)

# Script/region qualifiers that may follow a code (`zh-Hans`, `pt-BR`) and the variant they name.
VARIANTS: dict[str, str] = {
    "hans": "Simplified", "chs": "Simplified", "sc": "Simplified", "简体": "Simplified", "简中": "Simplified",
    "簡體": "Simplified", "gb": "Simplified", "cn": "Simplified",
    "hant": "Traditional", "cht": "Traditional", "tc": "Traditional", "繁体": "Traditional",
    "繁體": "Traditional", "繁中": "Traditional", "big5": "Traditional", "tw": "Traditional",
    "hk": "Traditional", "br": "Brazilian", "brazilian": "Brazilian", "pt": "European",
    "lat": "Latin American", "latino": "Latin American", "la": "Latin American", "mx": "Latin American",
    "419": "Latin American",
    "us": "US", "gb-eng": "UK", "uk": "UK", "ca": "Canadian", "es": "Castilian",
}

# Flags Jellyfin reads from external track names (spec §11): forced=`forced|foreign`, SDH=`sdh|cc|hi`.
FORCED_WORDS = frozenset({"forced", "foreign", "форсированные", "форсированный", "форс", "signs", "надписи"})
SDH_WORDS = frozenset({"sdh", "cc", "hoh", "hearing-impaired", "глухих"})
DEFAULT_WORDS = frozenset({"default"})

# Words that say nothing about language but sit among language words ("Rus Subs", "2_English").
FILLER_WORDS = frozenset({
    "sub", "subs", "subtitle", "subtitles", "subtitulos", "srt", "ass", "sound", "sounds", "audio", "dub",
    "dubs", "dubbed", "track", "tracks", "voice", "voices", "full", "complete", "song", "songs", "and", "&",
    "субтитры", "субтитров", "сабы", "звук", "озвучка", "озвучки", "дорожки", "полные", "внешние",
    "字幕", "双语", "雙語", "内封", "外挂",
})

CODE_BY_WORD: dict[str, str] = {}
for _code, _words in LANGUAGE_TABLE:
    CODE_BY_WORD[_code] = _code
    for _word in _words:
        CODE_BY_WORD.setdefault(_word.casefold(), _code)
# Two-letter spellings: trusted only at the end of a name, never in a folder of several words.
SHORT_WORDS = frozenset(w for w in CODE_BY_WORD if len(w) <= 2)

_SPLIT = re.compile(r"[\s._\-\[\](){},;+~!]+")
_VARIANT_JOIN = re.compile(r"(?i)(?<![^\W_])([a-z]{2})[-_]([a-z]{2,4}|419)(?![^\W_])")


@dataclass(frozen=True)
class TrackInfo:
    """What a subtitle/audio name says: language, flags and the leftover words (a title candidate)."""

    language: str | None
    flags: tuple[str, ...]
    variant: str | None
    rest: str


def words(text: str) -> list[str]:
    """The case-folded words of a name (split at dots, dashes, brackets, spaces)."""
    return [w for w in _SPLIT.split(unicodedata.normalize("NFC", text).casefold()) if w]


def _trailing_run(tokens: list[str], whole: bool) -> tuple[list[str], list[str]]:
    """Split `tokens` into (leading words, trailing run of language/flag/filler/number words)."""
    if whole:
        return [], tokens
    cut = len(tokens)
    while cut > 0:
        w = tokens[cut - 1]
        if not (w in CODE_BY_WORD or w in FLAG_WORDS or w in FILLER_WORDS or w in VARIANTS
                or (w.isdigit() and len(w) <= 2) or w == "hi"):
            break
        cut -= 1
    return tokens[:cut], tokens[cut:]


FLAG_WORDS = FORCED_WORDS | SDH_WORDS | DEFAULT_WORDS
GENERIC_WORDS = FILLER_WORDS | FLAG_WORDS | frozenset(CODE_BY_WORD)


def read_track(text: str, *, whole: bool = False, folder: bool = False) -> TrackInfo:
    """Read language, flags and variant from a subtitle/audio name (or folder name).

    `whole`: every word is a suffix after the video's name (otherwise only the trailing run counts).
    `folder`: two-letter codes count only when they are the whole name.
    """
    variant = None
    joined = _VARIANT_JOIN.search(text)
    if joined and joined.group(1).casefold() in CODE_BY_WORD and joined.group(2).casefold() in VARIANTS:
        variant = VARIANTS[joined.group(2).casefold()]
        text = text[: joined.start()] + joined.group(1) + text[joined.end():]
    found = words(text)
    lead, run = _trailing_run(found, whole)
    language: str | None = None
    flags: set[str] = set()
    saw_hi = False
    leftover: list[str] = list(lead)
    for w in run:
        if w in FORCED_WORDS:
            flags.add("forced")
        elif w in SDH_WORDS:
            flags.add("sdh")
        elif w in DEFAULT_WORDS:
            flags.add("default")
        elif w == "hi":
            saw_hi = True
        elif w in CODE_BY_WORD and not (w in SHORT_WORDS and folder and len(found) > 1):
            code = CODE_BY_WORD[w]
            if language is None:
                language = code
            if code == "zh" and w in VARIANTS and variant is None:
                variant = VARIANTS[w]
        elif w in VARIANTS and language is not None and variant is None:
            variant = VARIANTS[w]
        else:
            leftover.append(w)
    if saw_hi:
        # Jellyfin's rule: `hi` alone is Hindi, after a language (`en.hi`) it means hearing-impaired.
        if language is None:
            language = "hi"
        else:
            flags.add("sdh")
    ordered = tuple(f for f in ("default", "forced", "sdh") if f in flags)
    return TrackInfo(language, ordered, variant, " ".join(leftover))


_REGION_CODE = re.compile(r"[a-z]{2}|[a-z]{4}|[0-9]{3}")


def language_code(value: str | None, *, any_code: bool = False) -> str | None:
    """A language as Jellybit writes it ('en', 'pt-BR') from a code or name; None if not one it knows.

    `any_code`: also accept a bare ISO 639 code that is not in the table (a human's pin, 'tl').
    """
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFC", value).strip().casefold().replace("_", "-")
    if text in CODE_BY_WORD:
        return CODE_BY_WORD[text]
    base, _, region = text.partition("-")
    if base in CODE_BY_WORD and _REGION_CODE.fullmatch(region):
        region = region.upper() if len(region) == 2 else region.title()
        return f"{CODE_BY_WORD[base]}-{region}"
    if any_code and re.fullmatch(r"[a-z]{2,3}", text) and text not in NOT_LANGUAGES:
        return text
    return None


# ISO 639-2 codes that name no language, and words that mean "none".
NOT_LANGUAGES = frozenset({"und", "mul", "zxx", "mis", "xx", "unk", "non", "nil"})
