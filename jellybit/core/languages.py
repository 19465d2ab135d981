"""Language and flag words found in subtitle/audio names (ISO 639 codes, English and native names)."""

from __future__ import annotations

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
