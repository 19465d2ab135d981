"""Jellyfin name pieces: title folders, seasons, episode codes, labels, extras folders (pure).

Every rule cites the Jellyfin source it follows; docs/naming.md has the examples.
jellybit.core.targets assembles these pieces into target paths.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from jellybit.core.providers import Provider, facts
from jellybit.core.records import MediaType, Work
from jellybit.core.sanitize import clean_text, sanitize_component, truncate_utf8

MOVIES = "movies"
SERIES = "series"

# Byte budgets: a title folder must leave room, inside one 255-byte component, for the file
# named after it plus " - label", "-part12" and a subtitle's ".Track 12.pt-BR.default.forced.sdh.srt".
TITLE_BYTES = 120
LABEL_BYTES = 40

_ID_VALUE = re.compile(r"[A-Za-z0-9]{1,32}")
_IMDB_VALUE = re.compile(r"tt\d{1,12}")

# Names Jellyfin's IgnorePatterns skip (a folder "metadata" or a file "sample.mkv" vanishes).
_JELLYFIN_IGNORED = frozenset(
    {"metadata", "sample", "extrafanart", "extrathumbs", "lost+found", "ps3_update", "ps3_vprm",
     "temprec", "tempsbe", "eadir", "@eadir", "#recycle", "@recycle", "$recycle.bin",
     "system volume information", "thumbs.db", "small.jpg", "albumart.jpg", "subs"}
)
_TAG_RE = re.compile(r"\[\s*([A-Za-z]+?)id\s*[-=]\s*([^\]\s]+)\s*\]", re.IGNORECASE)
_EXT = re.compile(r"\.[a-z0-9][a-z0-9+_-]{0,9}")
_YEAR_TAIL = re.compile(r"^(?P<title>.*?)\s*\((?P<year>\d{4})\)\s*$")

# docs media/movies "Extras Folders" and Emby.Naming NamingOptions.VideoExtraRules
# (DirectoryName rules). Keys are the kind with everything but letters removed.
EXTRAS_FOLDERS = (
    "behind the scenes", "deleted scenes", "interviews", "scenes", "samples", "shorts",
    "featurettes", "clips", "other", "extras", "trailers", "theme-music", "backdrops",
)
_EXTRA_ALIASES = {
    "trailer": "trailers", "trailers": "trailers", "teaser": "trailers", "teasers": "trailers",
    "featurette": "featurettes", "featurettes": "featurettes",
    "behindthescenes": "behind the scenes", "bts": "behind the scenes",
    "makingof": "behind the scenes", "making": "behind the scenes",
    "deleted": "deleted scenes", "deletedscene": "deleted scenes", "deletedscenes": "deleted scenes",
    "interview": "interviews", "interviews": "interviews",
    "scene": "scenes", "scenes": "scenes", "short": "shorts", "shorts": "shorts",
    "clip": "clips", "clips": "clips", "other": "other", "others": "other",
    "extra": "extras", "extras": "extras", "bonus": "extras", "sample": "samples", "samples": "samples",
    "theme": "theme-music", "thememusic": "theme-music", "themesong": "theme-music",
    "themesongs": "theme-music", "backdrop": "backdrops", "backdrops": "backdrops",
}


def avoid_ignored(name: str) -> str:
    """Append '_' to a name Jellyfin's scanner would skip ('metadata', 'sample', ...)."""
    return f"{name}_" if name.casefold() in _JELLYFIN_IGNORED else name


def id_tag(work: Work) -> str | None:
    """The bracket tag for the matched provider ('[tmdbid-680]'), or None when Jellyfin has none."""
    if not work.provider or not work.provider_id:
        return None
    known = facts(work.provider)              # which tags Jellyfin reads: the provider table says
    name = known.folder_tag(work.media_type) if known else None
    if known is None or name is None:
        return None
    value = work.provider_id.strip()
    if known.provider is Provider.IMDB:
        value = f"tt{value}" if value.isdigit() else value.lower()
        if not _IMDB_VALUE.fullmatch(value):
            return None
    elif not _ID_VALUE.fullmatch(value):
        return None                # anything else could smuggle a second tag or a separator
    return f"[{name}-{value}]"


def clean_title(title: str, year: int | None = None) -> str:
    """A work title as it appears in names: sanitized, brackets neutralized, length capped."""
    # A '[' in a title could forge a provider tag ("X [tmdbid-1]"); round brackets are inert.
    text = (title or "").replace("[", "(").replace("]", ")")
    if year is not None:
        match = _YEAR_TAIL.match(text)
        if match and int(match["year"]) == year:
            text = match["title"]          # "Dune (2021)" with year 2021: do not say it twice
    text = clean_text(truncate_utf8(clean_text(text), TITLE_BYTES))
    # Nothing readable left ("../..", "?"): a dash-led or empty name helps nobody.
    return text if any(ch.isalnum() for ch in text) else "Untitled"


def _year(year: int | None) -> int | None:
    return year if isinstance(year, int) and 1000 <= year <= 9999 else None


def title_folder(work: Work) -> str:
    """'Title (Year) [tmdbid-N]' (movies) or 'Title (Year) [tvdbid-N]' (series); parts optional."""
    year = _year(work.year)
    parts = [clean_title(work.title, year)]
    if year is not None:
        parts.append(f"({year})")
    tag = id_tag(work)
    if tag:
        parts.append(tag)
    return avoid_ignored(sanitize_component(" ".join(parts), fallback="Untitled"))


def parse_title_folder(name: str) -> tuple[str, int | None, dict[str, str]]:
    """Inverse of title_folder: (title, year, {provider: id}) with provider = tag minus 'id'."""
    ids: dict[str, str] = {}
    for match in _TAG_RE.finditer(name):
        ids.setdefault(match[1].lower(), match[2])
    rest = _TAG_RE.sub(" ", name)
    rest = re.sub(r"\s+", " ", rest).strip()
    year: int | None = None
    match = _YEAR_TAIL.match(rest)
    if match:
        rest, year = match["title"].strip(), int(match["year"])
    if rest.endswith("_") and rest[:-1].casefold() in _JELLYFIN_IGNORED:
        rest = rest[:-1]
    return rest, year, ids


def season_folder(season: int) -> str:
    """'Season 01' (docs media/shows: never 'S01'; pad with zeros); specials are 'Season 00'."""
    return f"Season {season:02d}"


def episode_code(season: int, episodes: tuple[int, ...] | list[int]) -> str:
    """'S01E02', or 'S01E01-E02' for a file holding several episodes (docs media/shows)."""
    eps = sorted(set(episodes))
    code = f"S{season:02d}E{eps[0]:02d}"
    return code if len(eps) == 1 else f"{code}-E{eps[-1]:02d}"


def version_label(version: str | None) -> str | None:
    """A multi-version label: docs media/movies say no periods or commas; brackets dropped too."""
    if not version:
        return None
    # An unmatched '[' makes newer Jellyfin refuse the grouping; round brackets add nothing.
    text = clean_text(re.sub(r"[.,\[\](){}]", " ", str(version))).strip(" -")
    text = clean_text(truncate_utf8(text, LABEL_BYTES)).strip(" -")
    return text or None


def source_name(source: str) -> str:
    """PurePosixPath(source).name, without building a path for the usual 'a/b/c.ext'."""
    name = source.rpartition("/")[2]
    return name if name and name != "." else PurePosixPath(source).name


def name_suffix(name: str) -> str:
    """PurePosixPath(name).suffix of a file name: its last '.ext', '' for '.hidden' or 'name.'."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def source_ext(source: str) -> str:
    """A source file's extension, lowercased, when it looks like one ('.mkv', '.dvr-ms'); else ''."""
    suffix = name_suffix(source_name(source)).lower()
    return suffix if _EXT.fullmatch(suffix) else ""


def source_stem(source: str) -> str:
    """A source file's name without the extension source_ext would keep."""
    name = source_name(source)
    ext = name_suffix(name)
    return name[: -len(ext)] if ext else name


def source_without_suffix(source: str) -> str:
    """str(PurePosixPath(source).with_suffix('')), without building a path for a plain 'a/b/c.ext'."""
    plain = source and source != "." and not (
        "//" in source or "/./" in source or source.endswith(("/", "/.")) or source.startswith("./")
    )
    if not plain:
        return str(PurePosixPath(source).with_suffix(""))
    suffix = name_suffix(source_name(source))
    return source[: len(source) - len(suffix)]


def part_suffix(part: int | None) -> str:
    """'-part1' for a stacked multi-part file (docs media/movies 'Multiple Parts')."""
    return f"-part{part}" if isinstance(part, int) and part > 0 else ""


def extras_folder(kind: str | None) -> str:
    """The Jellyfin extras folder for an extra kind; unknown kinds go to the catch-all 'extras'."""
    key = re.sub(r"[^a-z]", "", (kind or "").lower())
    return _EXTRA_ALIASES.get(key, "extras")


def library_for(work: Work) -> str:
    """'movies' or 'series': the library root a work belongs under."""
    return MOVIES if work.media_type is MediaType.MOVIE else SERIES
