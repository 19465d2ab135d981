"""The words a user's context and hints are read with: one table of rows; another language is more rows.

Each row says which kind of word it is, what it means and how it is spelled, as a regular
expression matched case-insensitively against whole words (`\\w*` covers Russian endings:
`сезон\\w*` is `сезон`, `сезона`, `сезоне`). `(?-i:US)` matches only in capitals, so the pronoun
"us" is not the country. Adding German is adding rows with `lang="de"`: `Term("season", None, "de",
r"staffel\\w*")`, `Term("number", 2, "de", r"zweite\\w*")`, `Term("country", "DE", "de", r"deutsch\\w*")`…

Kinds (the value a row carries):
    season, episode, year   the word for it (None); numbers stand before or after it
    number                  a number word or ordinal (the int): "second", "two", "втор\\w*"
    ordinal_suffix          what follows digits in an ordinal: "nd", "-й" (None)
    media                   "movie" | "series" | "anime"
    country                 ISO 3166-1 alpha-2 (UK is GB): "American", "датск\\w*"
    language                ISO 639-1: "Russian", "русск\\w*" (a country word too when a people's)
    audio, subtitles        the words that make a language an audio or subtitle preference
    link                    short words between them ("in", "на"); they carry nothing themselves
    version                 "version", "версия": part of "Danish version", nothing alone
    negation                "not", "не": "не фильм" states a series, "not a series" a movie
    filler                  words that carry no information and are neither read nor reported
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One row of the table: a kind of word, what it means, the language and its spellings."""

    kind: str
    value: str | int | None
    lang: str
    pattern: str


_ORDINALS_EN = ("first|one", "second|two", "third|three", "fourth|four", "fifth|five", "sixth|six",
                "seventh|seven", "eighth|eight", "ninth|nine", "tenth|ten", "eleventh|eleven",
                "twelfth|twelve", "thirteenth|thirteen", "fourteenth|fourteen", "fifteenth|fifteen",
                "sixteenth|sixteen", "seventeenth|seventeen", "eighteenth|eighteen", "nineteenth|nineteen",
                "twentieth|twenty")
_ORDINALS_RU = ("перв\\w*|один|одна", "втор\\w*|два|две|двух", "трет\\w*|три|трёх|трех",
                "четв[её]рт\\w*|четыре", "пят\\w*", "шест\\w*", "седьм\\w*|семь", "восьм\\w*|восемь",
                "девят\\w*", "десят\\w*", "одиннадцат\\w*", "двенадцат\\w*", "тринадцат\\w*",
                "четырнадцат\\w*", "пятнадцат\\w*", "шестнадцат\\w*", "семнадцат\\w*", "восемнадцат\\w*",
                "девятнадцат\\w*", "двадцат\\w*")

TERMS: tuple[Term, ...] = (
    # ---------------------------------------------------------------- season, episode, year
    Term("season", None, "en", r"seasons?"),
    Term("season", None, "ru", r"сезон\w*"),
    Term("episode", None, "en", r"episodes?|eps?\.?"),
    Term("episode", None, "ru", r"сери[яиюей]|эпизод\w*"),
    Term("year", None, "en", r"year"),
    Term("year", None, "ru", r"год\w*|г\."),
    Term("ordinal_suffix", None, "en", r"st|nd|rd|th"),
    Term("ordinal_suffix", None, "ru", r"-?(?:ый|ий|ой|ая|ого|его|ом|ем|й|я|е|го|м)"),
    *(Term("number", n, "en", words) for n, words in enumerate(_ORDINALS_EN, 1)),
    *(Term("number", n, "ru", words) for n, words in enumerate(_ORDINALS_RU, 1)),
    # ---------------------------------------------------------------- what it is
    Term("media", "movie", "en", r"movies?|films?|motion picture|feature film|tv movie|tv film|cartoon"),
    Term("media", "movie", "ru", r"фильм\w*|кино|кинофильм\w*|мультфильм\w*|мультик\w*|телефильм\w*"),
    Term("media", "series", "en", r"series|shows?|tv|tv series|tv show|television|sitcom|mini-?series"
                                  r"|serial|animated series|cartoon series"),
    Term("media", "series", "ru", r"сериал\w*|мини-?сериал\w*|мультсериал\w*|шоу|телесериал\w*"),
    Term("media", "anime", "en", r"anime"),
    Term("media", "anime", "ru", r"аниме"),
    # ---------------------------------------------------------------- country (ISO 3166-1 alpha-2)
    Term("country", "US", "en", r"americans?|america|usa|u\.s\.a?\.?|(?-i:US)|united states"),
    Term("country", "US", "ru", r"американск\w*|америк\w*|сша"),
    Term("country", "GB", "en", r"british|britain|great britain|england|(?-i:UK)|u\.k\.|united kingdom"),
    Term("country", "GB", "ru", r"британск\w*|британи\w*|англи[яиюей]|английск\w* верси\w*"),
    Term("country", "DK", "en", r"danish|denmark"),
    Term("country", "DK", "ru", r"датск\w*|дани[яиюей]"),
    Term("country", "SE", "en", r"swedish|sweden"),
    Term("country", "SE", "ru", r"шведск\w*|швеци\w*"),
    Term("country", "NO", "en", r"norwegian|norway"),
    Term("country", "NO", "ru", r"норвежск\w*|норвеги\w*"),
    Term("country", "DE", "en", r"german|germany"),
    Term("country", "DE", "ru", r"немецк\w*|германи\w*"),
    Term("country", "FR", "en", r"french|france"),
    Term("country", "FR", "ru", r"французск\w*|франци[яиюей]"),
    Term("country", "ES", "en", r"spanish|spain"),
    Term("country", "ES", "ru", r"испанск\w*|испани\w*"),
    Term("country", "IT", "en", r"italian|italy"),
    Term("country", "IT", "ru", r"итальянск\w*|итали[яиюей]"),
    Term("country", "RU", "en", r"russian|russia"),
    Term("country", "RU", "ru", r"русск\w*|российск\w*|росси[яиюей]"),
    Term("country", "UA", "en", r"ukrainian|ukraine"),
    Term("country", "UA", "ru", r"украинск\w*|украин[аеуы]"),
    Term("country", "JP", "en", r"japanese|japan"),
    Term("country", "JP", "ru", r"японск\w*|япони\w*"),
    Term("country", "KR", "en", r"korean|korea|south korea"),
    Term("country", "KR", "ru", r"корейск\w*|коре[яиюей]"),
    Term("country", "CN", "en", r"chinese|china"),
    Term("country", "CN", "ru", r"китайск\w*|кита[йяюе]"),
    Term("country", "CA", "en", r"canadian|canada"),
    Term("country", "CA", "ru", r"канадск\w*|канад[аеуы]"),
    Term("country", "AU", "en", r"australian|australia"),
    Term("country", "AU", "ru", r"австралийск\w*|австрали[яиюей]"),
    Term("country", "NZ", "en", r"new zealand"),
    Term("country", "IE", "en", r"irish|ireland"),
    Term("country", "IN", "en", r"indian|india"),
    Term("country", "IN", "ru", r"индийск\w*|инди[яиюей]"),
    Term("country", "BR", "en", r"brazilian|brazil"),
    Term("country", "MX", "en", r"mexican|mexico"),
    Term("country", "NL", "en", r"dutch|netherlands|holland"),
    Term("country", "BE", "en", r"belgian|belgium"),
    Term("country", "PL", "en", r"polish|poland"),
    Term("country", "PL", "ru", r"польск\w*|польш[аеиу]"),
    Term("country", "TR", "en", r"turkish|turkey"),
    Term("country", "TR", "ru", r"турецк\w*|турци[яиюей]"),
    Term("country", "IL", "en", r"israeli|israel"),
    Term("country", "FI", "en", r"finnish|finland"),
    Term("country", "FI", "ru", r"финск\w*|финлянди\w*"),
    Term("country", "IS", "en", r"icelandic|iceland"),
    # ---------------------------------------------------------------- language (ISO 639-1)
    Term("language", "en", "en", r"english|eng"),
    Term("language", "en", "ru", r"английск\w*|англ\.?"),
    Term("language", "ru", "en", r"russian|rus"),
    Term("language", "ru", "ru", r"русск\w*|рус\.?"),
    Term("language", "uk", "en", r"ukrainian"),
    Term("language", "uk", "ru", r"украинск\w*"),
    Term("language", "de", "en", r"german"),
    Term("language", "de", "ru", r"немецк\w*"),
    Term("language", "fr", "en", r"french"),
    Term("language", "fr", "ru", r"французск\w*"),
    Term("language", "es", "en", r"spanish"),
    Term("language", "es", "ru", r"испанск\w*"),
    Term("language", "it", "en", r"italian"),
    Term("language", "it", "ru", r"итальянск\w*"),
    Term("language", "ja", "en", r"japanese"),
    Term("language", "ja", "ru", r"японск\w*"),
    Term("language", "ko", "en", r"korean"),
    Term("language", "ko", "ru", r"корейск\w*"),
    Term("language", "zh", "en", r"chinese|mandarin|cantonese"),
    Term("language", "zh", "ru", r"китайск\w*"),
    Term("language", "da", "en", r"danish"),
    Term("language", "da", "ru", r"датск\w*"),
    Term("language", "sv", "en", r"swedish"),
    Term("language", "sv", "ru", r"шведск\w*"),
    Term("language", "no", "en", r"norwegian"),
    Term("language", "no", "ru", r"норвежск\w*"),
    Term("language", "fi", "en", r"finnish"),
    Term("language", "fi", "ru", r"финск\w*"),
    Term("language", "pl", "en", r"polish"),
    Term("language", "pl", "ru", r"польск\w*"),
    Term("language", "pt", "en", r"portuguese"),
    Term("language", "pt", "ru", r"португальск\w*"),
    Term("language", "nl", "en", r"dutch"),
    Term("language", "nl", "ru", r"голландск\w*|нидерландск\w*"),
    Term("language", "tr", "en", r"turkish"),
    Term("language", "tr", "ru", r"турецк\w*"),
    Term("language", "he", "en", r"hebrew"),
    Term("language", "he", "ru", r"иврит\w*"),
    Term("language", "ar", "en", r"arabic"),
    Term("language", "ar", "ru", r"арабск\w*"),
    Term("language", "hi", "en", r"hindi"),
    Term("language", "hi", "ru", r"хинди"),
    # ---------------------------------------------------------------- audio / subtitles
    Term("audio", None, "en", r"dub|dubs|dubbed|dubbing|audio|voice|voices|voice-?over|voiced|sound|track"),
    Term("audio", None, "ru", r"озвучк\w*|озвучен\w*|дубляж\w*|дублирован\w*|перевод\w*|звук\w*|"
                              r"дорожк\w*|одноголос\w*|многоголос\w*"),
    Term("subtitles", None, "en", r"subtitles?|subtitled|subs?|captions?"),
    Term("subtitles", None, "ru", r"субтитр\w*|саб\w*"),
    Term("link", None, "en", r"in|with|on|and"),
    Term("link", None, "ru", r"на|с|со|и"),
    Term("version", None, "en", r"version|edition|remake|adaptation|original"),
    Term("version", None, "ru", r"верси[яиюей]|адаптаци\w*|ремейк\w*|оригинал\w*"),
    Term("negation", None, "en", r"not|isn't|is not|isn’t"),
    Term("negation", None, "ru", r"не|а не"),
    # ---------------------------------------------------------------- words that say nothing
    Term("filler", None, "en", r"a|an|the|of|it|its|it's|is|are|was|be|this|that|these|those|for|to|by|"
                               r"from|or|but|please|pls|plz|thanks|thank|you|i|me|my|we|our|want|need|"
                               r"just|only|also|here|there|one|which|what|about|like|as|at|not|no|"
                               r"download|downloaded|torrent|release|should|must|would|will|get|put"),
    Term("filler", None, "ru", r"это|эта|этот|эти|то|тот|та|те|в|во|из|для|от|по|к|ко|о|об|про|а|но|или|"
                               r"же|ли|вот|пожалуйста|плиз|спасибо|мне|я|мы|нам|мой|моя|только|тоже|"
                               r"также|нужн\w*|надо|хочу|скачать|скачал\w*|торрент\w*|раздач\w*|"
                               r"который|которая|которое|которые|как|не|нет"),
)
