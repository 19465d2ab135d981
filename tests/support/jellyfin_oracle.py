"""Python transcriptions of the Jellyfin parsers our names must satisfy (test oracle only).

Each function follows the C# source it names (jellyfin/jellyfin, Emby.Naming and
Emby.Server.Implementations), so the naming tests check our output the way Jellyfin reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A slice of what LocalizationManager.FindLanguageInfo resolves (two/three-letter codes, names).
LANGUAGES = {
    "en": "eng", "eng": "eng", "english": "eng",
    "ru": "rus", "rus": "rus", "russian": "rus",
    "uk": "ukr", "ukr": "ukr", "ukrainian": "ukr",
    "de": "deu", "deu": "deu", "ger": "deu", "german": "deu",
    "fr": "fra", "fra": "fra", "fre": "fra", "french": "fra",
    "ja": "jpn", "jpn": "jpn", "japanese": "jpn",
    "zh": "zho", "zho": "zho", "chi": "zho", "chinese": "zho",
    "hi": "hin", "hin": "hin", "hindi": "hin",
    "pt-br": "pt-BR",
}


@dataclass
class External:
    """ExternalPathParserResult."""

    language: str | None = None
    is_default: bool = False
    is_forced: bool = False
    is_hearing_impaired: bool = False
    title: str | None = None


def match_external(video_stem: str, file_name: str) -> str | None:
    """MediaInfoResolver.GetExternalFiles: the extra string after the video stem, or None."""
    stem = file_name.rsplit(".", 1)[0] if "." in file_name else file_name
    if not stem.casefold().startswith(video_stem.casefold()):
        return None
    rest = stem[len(video_stem):]
    if rest and rest[0] != ".":
        return None
    return rest


def parse_external(extra: str) -> External:
    """Emby.Naming.ExternalFiles.ExternalPathParser.ParseFile, for the '.' delimiter."""
    info = External()
    if not extra:
        return info
    language_string, title_string = extra, ""
    while language_string:
        last = language_string.rfind(".")
        if last == -1:
            break
        current = language_string[last:]
        word = current[1:]
        lowered = word.lower()
        if "default" in lowered:
            info.is_default = True
            language_string = language_string[:last]
            continue
        if "forced" in lowered or "foreign" in lowered:
            info.is_forced = True
            language_string = language_string[:last]
            continue
        culture = LANGUAGES.get(lowered)
        if culture is not None and info.language is None:
            info.language = culture
        elif culture is not None and info.language == "hin":
            info.is_hearing_impaired = True
            info.language = culture
        elif lowered in ("cc", "hi", "sdh"):
            info.is_hearing_impaired = True
        else:
            title_string = current + title_string
        language_string = language_string[:last]
    info.title = title_string[1:] if title_string else None
    return info


def get_attribute_value(text: str, attribute: str) -> str | None:
    """PathExtensions.GetAttributeValue: the value of the first '[attr-value]' or '[attr=value]'."""
    lowered, attr = text.lower(), attribute.lower()
    index = lowered.find(attr)
    max_index = len(text) - len(attr) - 3
    while -1 < index < max_index:
        end = index + len(attr)
        if index > 0 and text[index - 1] == "[" and text[end] in "=-":
            closing = text.find("]", end)
            if closing > end + 1:
                return text[end + 1 : closing]
        index = lowered.find(attr, index + 1)
    return None


# NamingOptions.VideoFileStackingRules (the numeric rule).
STACKING = re.compile(
    r"^(?P<filename>.*?)(?:(?<=[\]\)\}])|[ _.-]+)[\(\[]?(?P<parttype>cd|dvd|part|pt|dis[ck])"
    r"[ _.-]*(?P<number>[0-9]+)[\)\]]?(?:\.[^.]+)?$",
    re.IGNORECASE,
)
# NamingOptions.EpisodeExpressions[0] (Kodi S01E02) and the last MultipleEpisodeExpressions entries.
EPISODE = re.compile(
    r".*(\\|\/)(?P<seriesname>((?![Ss]([0-9]+)[][ ._-]*[Ee]([0-9]+))[^\\\/])*)?[Ss](?P<seasonnumber>[0-9]+)"
    r"[][ ._-]*[Ee](?P<epnumber>[0-9]+)([^\\/]*)$"
)
MULTI_EPISODE = re.compile(
    r".*(\\|\/)(?P<seriesname>[^\\\/]*)[sS](?P<seasonnumber>[0-9]{1,4})[xX\.]?[eE](?P<epnumber>[0-9]{1,3})"
    r"((-| - )?[xXeE](?P<endingepnumber>[0-9]{1,3}))+[^\\\/]*$"
)
BY_DATE = re.compile(r"(?P<year>[0-9]{4})[._ -](?P<month>[0-9]{2})[._ -](?P<day>[0-9]{2})")
# SeasonPathParser accepts "Season 01"; the docs forbid "S01".
SEASON_FOLDER = re.compile(r"^Season (?P<n>[0-9]+)$")


def eligible_for_multi_version(folder_name: str, file_stem: str) -> bool:
    """VideoListResolver.IsEligibleForMultiVersion, without the keyword cleaner."""
    if not file_stem.lower().startswith(folder_name.lower()):
        return False
    rest = file_stem[len(folder_name):].strip()
    return rest == "" or rest.startswith("-")
