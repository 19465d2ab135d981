"""Classify a torrent's files (video, subtitle, audio, extra, sample, ignored) and attach tracks to videos."""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from jellybit.core.languages import GENERIC_WORDS, TrackInfo, read_track, words
from jellybit.core.records import PlanItem, Role, SourceFile

# ------------------------------------------------------------------------------------------- the rules
# Every classification rule lives in this block; the code below only applies it.

EXTENSIONS: dict[Role, frozenset[str]] = {
    Role.VIDEO: frozenset({
        ".mkv", ".mp4", ".m4v", ".avi", ".mov", ".wmv", ".ts", ".m2ts", ".mts", ".mpg", ".mpeg", ".webm",
        ".flv", ".vob", ".ogv", ".3gp", ".divx", ".xvid", ".rmvb", ".asf",
    }),
    Role.SUBTITLE: frozenset({
        ".srt", ".ass", ".ssa", ".sub", ".idx", ".vtt", ".sup", ".smi", ".sami", ".mks",
    }),
    Role.AUDIO: frozenset({
        ".mka", ".ac3", ".dts", ".eac3", ".flac", ".aac", ".mp3", ".m4a", ".opus", ".ogg",
    }),
}

# Why a file is ignored, by extension (anything not listed anywhere is "not a media file").
IGNORED_KINDS: dict[str, frozenset[str]] = {
    "text or metadata": frozenset({".nfo", ".txt", ".md", ".rtf", ".pdf", ".doc", ".docx", ".xml", ".json",
                                   ".log", ".cue", ".m3u", ".m3u8", ".srr", ".sfv", ".md5", ".sha1",
                                   ".sha256", ".par2", ".torrent", ".db", ".ini", ".htm", ".html"}),
    "image": frozenset({".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff", ".ico", ".svg"}),
    "executable or link": frozenset({".exe", ".msi", ".bat", ".cmd", ".com", ".scr", ".sh", ".ps1", ".vbs",
                                     ".js", ".jar", ".apk", ".dmg", ".app", ".lnk", ".url", ".desktop",
                                     ".webloc", ".dll"}),
    "archive": frozenset({".rar", ".zip", ".7z", ".tar", ".gz", ".bz2", ".xz", ".iso", ".img"}),
}

# Jellyfin's extras folders (spec §11) plus the synonyms torrents use; keys are normalized folder names.
EXTRA_FOLDERS: dict[str, str] = {
    "trailers": "trailers", "trailer": "trailers", "teasers": "trailers",
    "featurettes": "featurettes", "featurette": "featurettes",
    "behind the scenes": "behind the scenes", "making of": "behind the scenes",
    "deleted scenes": "deleted scenes", "deleted": "deleted scenes",
    "interviews": "interviews", "interview": "interviews",
    "scenes": "scenes", "shorts": "shorts", "clips": "clips", "other": "other",
    "extras": "extras", "extra": "extras", "bonus": "extras", "bonuses": "extras",
    "special features": "extras", "bonus features": "extras", "доп материалы": "extras",
    "дополнительные материалы": "extras", "бонусы": "extras",
}

# Jellyfin's file-name suffixes (`Movie-trailer.mkv`).
EXTRA_SUFFIXES: dict[str, str] = {
    "trailer": "trailers", "teaser": "trailers", "featurette": "featurettes",
    "behindthescenes": "behind the scenes", "deleted": "deleted scenes", "deletedscene": "deleted scenes",
    "interview": "interviews", "scene": "scenes", "short": "shorts", "clip": "clips", "other": "other",
    "extra": "extras",
}

# Words inside a file name that make a clearly smaller video an extra (see EXTRA_WORD_MAX_SHARE).
EXTRA_WORDS: tuple[tuple[str, str], ...] = (
    (r"trailers?|teasers?|tv spot", "trailers"),
    (r"featurettes?", "featurettes"),
    (r"behind the scenes|making of|making-of", "behind the scenes"),
    (r"deleted scenes?", "deleted scenes"),
    (r"interviews?", "interviews"),
    (r"ncop\d*|nced\d*|creditless( op| ed| opening| ending)?|clean (opening|ending)", "other"),
)
EXTRA_WORD_MAX_SHARE = 0.4        # at most this fraction of the largest video's size

SAMPLE_FOLDERS = frozenset({"sample", "samples"})
SAMPLE_WORD_MAX_BYTES = 500 * 1024 * 1024    # "sample" inside a bigger file's name is a title word
SAMPLE_TINY_BYTES = 30 * 1024 * 1024        # a video this small ...
SAMPLE_TINY_RATIO = 20                        # ... next to one this many times larger is a sample

JUNK_FOLDERS = frozenset({"__macosx", ".ds_store", "@eadir", ".appledouble"})
SOUNDTRACK_FOLDERS = frozenset({"ost", "soundtrack", "soundtracks", "music", "саундтрек"})

# ------------------------------------------------------------------------------------------- the code

_NORM = re.compile(r"[\s._\-]+")
_EPISODE_KEYS = (
    re.compile(r"(?i)s(\d{1,2})[ ._-]?e(\d{1,4})"),
    re.compile(r"(?i)(?<!\d)(\d{1,2})x(\d{2,3})(?!\d)"),
    re.compile(r"(?i)(?:^|[ ._\-\[(])(?:e|ep|episode|серия)[ ._-]?(\d{1,4})(?!\d)"),
    re.compile(r"(?:^| )- (\d{1,4})(?:v\d)?(?: |$)"),
    re.compile(r"^(\d{1,4})$"),
)


@dataclass(frozen=True)
class _File:
    source: SourceFile
    dirs: tuple[str, ...]       # folders below the torrent's common root
    stem: str
    ext: str

    @property
    def norm_stem(self) -> str:
        return normalize(self.stem)


def normalize(text: str) -> str:
    """Case-fold, NFC, and turn separator runs into one space: the form names are compared in."""
    return _NORM.sub(" ", unicodedata.normalize("NFC", text).casefold()).strip()


def _split(path: str) -> list[str]:
    return [part for part in re.split(r"[/\\]", path) if part not in ("", ".")]


def _stem_ext(name: str) -> tuple[str, str]:
    dot = name.rfind(".")
    if dot <= 0 or len(name) - dot > 9:
        return name, ""
    return name[:dot], name[dot:].casefold()


def _prepare(files: Sequence[SourceFile]) -> list[_File]:
    parts = [_split(f.path) for f in files]
    shared_root = len(parts) > 1 and all(len(p) > 1 for p in parts) and len({p[0] for p in parts}) == 1
    prepared = []
    for file, p in zip(files, parts, strict=True):
        name = p[-1] if p else ""
        stem, ext = _stem_ext(name)
        dirs = tuple(p[1:-1] if shared_root else p[:-1])
        prepared.append(_File(file, dirs, stem, ext))
    return prepared


def _ignored_kind(ext: str) -> str:
    for kind, extensions in IGNORED_KINDS.items():
        if ext in extensions:
            return kind
    return "not a media file"


def _extra_kind(file: _File, largest: int, single: bool) -> str | None:
    for folder in reversed(file.dirs):
        kind = EXTRA_FOLDERS.get(normalize(folder))
        if kind:
            return kind
    dash = file.stem.rfind("-")
    tail = file.stem[dash + 1:].casefold() if dash > 0 else ""
    if tail in EXTRA_SUFFIXES and not single:
        return EXTRA_SUFFIXES[tail]
    if single or file.source.size > largest * EXTRA_WORD_MAX_SHARE:
        return None
    text = normalize(file.stem)
    for pattern, kind in EXTRA_WORDS:
        if re.search(rf"(?:^| )(?:{pattern})(?: |$)", text):
            return kind
    return None


def _is_sample(file: _File) -> bool:
    if any(normalize(d) in SAMPLE_FOLDERS for d in file.dirs):
        return True
    words = normalize(file.stem).split(" ")
    if words[-1] == "sample":
        return True
    return "sample" in words and file.source.size < SAMPLE_WORD_MAX_BYTES


def _is_tiny(file: _File, largest: int) -> bool:
    size = max(file.source.size, 0)
    return size < SAMPLE_TINY_BYTES and largest >= SAMPLE_TINY_RATIO * max(size, 1)


def _role(file: _File, largest: int, single: bool) -> tuple[Role, str | None, str | None]:
    """Return (role, extra kind, note) for one file from the rule tables."""
    lowered = {normalize(d) for d in file.dirs}
    if file.stem.startswith(".") or {d.casefold() for d in file.dirs} & JUNK_FOLDERS or not file.stem:
        return Role.IGNORED, None, "hidden or system file"
    if file.ext in EXTENSIONS[Role.VIDEO]:
        if _is_sample(file):
            return Role.SAMPLE, None, "sample"
        kind = _extra_kind(file, largest, single)
        if kind:
            return Role.EXTRA, kind, None
        if _is_tiny(file, largest):
            return Role.SAMPLE, None, "sample (tiny next to the main video)"
        return Role.VIDEO, None, None
    if file.ext in EXTENSIONS[Role.SUBTITLE]:
        return Role.SUBTITLE, None, None
    if file.ext in EXTENSIONS[Role.AUDIO]:
        if lowered & SOUNDTRACK_FOLDERS:
            return Role.IGNORED, None, "soundtrack"
        return Role.AUDIO, None, None
    return Role.IGNORED, None, _ignored_kind(file.ext)


def by_convention(path: str) -> bool:
    """Whether a video's role follows a naming convention (an extras or sample folder, a `-trailer`
    suffix, a name ending in `sample`) rather than a judgement from sizes and words."""
    parts = _split(path)
    if not parts:
        return False
    stem = _stem_ext(parts[-1])[0]
    folders = {normalize(d) for d in parts[:-1]}
    if folders & SAMPLE_FOLDERS or any(f in EXTRA_FOLDERS for f in folders):
        return True
    dash = stem.rfind("-")
    if dash > 0 and stem[dash + 1:].casefold() in EXTRA_SUFFIXES:
        return True
    return normalize(stem).split(" ")[-1] == "sample"


# ------------------------------------------------------------------------------------------- attaching


def episode_key(text: str) -> tuple[int | None, int] | None:
    """(season, episode) written in a name or folder (`S01E02`, `1x02`, `E02`, ` - 02 `, `02`), else None."""
    flat = " ".join(text.replace("_", " ").split())
    for pattern in _EPISODE_KEYS:
        match = pattern.search(flat)
        if match:
            groups = [g for g in match.groups() if g is not None]
            if len(groups) == 2:
                return int(groups[0]), int(groups[1])
            return None, int(groups[0])
    return None


class _Videos:
    """Lookup tables over the files subtitles and audio may follow."""

    def __init__(self, videos: list[_File]) -> None:
        self.videos = videos
        self.by_stem: dict[str, _File] = {}
        self.by_key: dict[tuple[int | None, int], list[_File]] = defaultdict(list)
        self.by_episode: dict[int, list[_File]] = defaultdict(list)
        self.by_start: dict[str, list[_File]] = defaultdict(list)
        for video in videos:
            self.by_stem.setdefault(video.norm_stem, video)
            words = video.norm_stem.split(" ")
            for cut in range(2, len(words)):
                self.by_start[" ".join(words[:cut])].append(video)
            key = episode_key(video.stem)
            if key:
                self.by_key[key].append(video)
                self.by_episode[key[1]].append(video)

    def prefix(self, stem: str) -> tuple[_File | None, str]:
        """The video whose stem is the longest word-prefix of `stem`, and what is left after it."""
        words = stem.split(" ")
        for cut in range(len(words), 0, -1):
            video = self.by_stem.get(" ".join(words[:cut]))
            if video is not None:
                return video, " ".join(words[cut:])
        return None, stem

    def find(self, track: _File) -> tuple[_File | None, str]:
        """Pick the video a track follows and the part of its name that is not the video's."""
        for folder in reversed(track.dirs):
            video = self.by_stem.get(normalize(folder))
            if video is not None:
                return video, track.norm_stem
        video, rest = self.prefix(track.norm_stem)
        if video is not None:
            return video, rest
        # `Film.2001.en.srt` next to `Film.2001.1080p.mkv`: the name without its language words
        # is the start of exactly one video's name.
        lead = read_track(track.norm_stem).rest
        starting = self.by_start.get(lead, []) if lead else []
        if len(starting) == 1:
            return starting[0], track.norm_stem[len(lead):].strip()
        for text in (track.stem, *reversed(track.dirs)):
            key = episode_key(text)
            if key is None:
                continue
            season, episode = key
            matches = self.by_key.get(key, []) if season is not None else self.by_episode.get(episode, [])
            if season is not None and not matches:
                matches = self.by_key.get((None, episode), [])
            if len(matches) == 1:
                return matches[0], track.norm_stem
            break
        if len(self.videos) == 1:
            return self.videos[0], track.norm_stem
        return None, track.norm_stem


# ------------------------------------------------------------------------------------------- language


def _track_info(track: _File, video: _File | None, rest: str) -> TrackInfo:
    own = read_track(rest, whole=video is not None and rest != track.norm_stem)
    language, flags, variant = own.language, set(own.flags), own.variant
    stem_key = video.norm_stem if video is not None else None
    for folder in reversed(track.dirs):
        if normalize(folder) == stem_key:
            continue
        info = read_track(folder, folder=True)
        language = language or info.language
        variant = variant or info.variant
        flags |= set(info.flags)
    ordered = tuple(f for f in ("default", "forced", "sdh") if f in flags)
    return TrackInfo(language, ordered, variant, own.rest)


# ------------------------------------------------------------------------------------------- classify


def classify(files: Iterable[SourceFile]) -> tuple[PlanItem, ...]:
    """Classify every file (source order kept) and attach subtitles/audio to their video."""
    source = list(files)
    prepared = _prepare(source)
    video_sizes = [f.source.size for f in prepared if f.ext in EXTENSIONS[Role.VIDEO]]
    largest = max(video_sizes, default=0)
    single = len(video_sizes) == 1
    roles = [_role(f, largest, single) for f in prepared]
    hosts = [f for f, (role, _, _) in zip(prepared, roles, strict=True) if role is Role.VIDEO]
    extras = [f for f, (role, _, _) in zip(prepared, roles, strict=True) if role is Role.EXTRA]
    main, side = _Videos(hosts), _Videos(extras)

    items: list[PlanItem] = []
    titles: dict[int, str] = {}
    for index, (file, (role, kind, note)) in enumerate(zip(prepared, roles, strict=True)):
        item = PlanItem(source=file.source.path, size=file.source.size, role=role, extra_kind=kind, note=note)
        if role in (Role.SUBTITLE, Role.AUDIO):
            video, rest = main.find(file)
            if video is None and extras:
                video, rest = side.prefix(file.norm_stem)
            if video is None and role is Role.AUDIO and not hosts:
                items.append(item.with_(role=Role.IGNORED, note="audio without a video"))
                continue
            info = _track_info(file, video, rest)
            item = item.with_(
                attached_to=video.source.path if video else None,
                language=info.language,
                flags=info.flags,
                note=None if video else "no matching video",
            )
            titles[index] = _title_candidate(file, video, info)
        items.append(item)
    return _separate_same_language(items, titles)


def _title_candidate(track: _File, video: _File | None, info: TrackInfo) -> str:
    stem_key = video.norm_stem if video is not None else None
    folders = [d for d in track.dirs if normalize(d) != stem_key and not set(words(d)) <= GENERIC_WORDS]
    # "2_English": the index alone says little, the whole name says more
    rest = "" if info.rest.replace(" ", "").isdigit() else info.rest
    parts = [*folders[-1:], info.variant or "", rest]
    return " ".join(p for p in parts if p).strip() or track.stem


def _separate_same_language(items: list[PlanItem], titles: dict[int, str]) -> tuple[PlanItem, ...]:
    """Give a track title to tracks that would otherwise share one target name."""
    groups: dict[tuple[object, ...], list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        if item.role in (Role.SUBTITLE, Role.AUDIO) and item.attached_to is not None:
            ext = _stem_ext(item.source.rsplit("/", 1)[-1])[1]
            groups[(item.attached_to, item.role, item.language, item.flags, ext)].append(index)
    for members in groups.values():
        if len(members) < 2:
            continue
        seen: set[str] = set()
        for number, index in enumerate(members, start=1):
            title = titles.get(index) or f"Track {number}"
            if title.casefold() in seen:
                title = f"{title} {number}"
            seen.add(title.casefold())
            items[index] = items[index].with_(track_title=title)
    return tuple(items)
