"""Plain-words formatting for the panel: sizes, speeds, times, states and episode ranges."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from jellybit.present import count, sentence, state_name, title_line
from jellybit.protocol import Role, State

__all__ = ["count", "sentence", "state_name", "title_line"]   # every face's words (jellybit.present)

# The colour of each state's badge (its name is every face's: `jellybit.present.state_name`).
COLOURS: dict[State, str] = {
    State.QUEUED: "blue-grey-8", State.DOWNLOADING: "primary", State.RECOGNIZING: "indigo",
    State.REVIEW: "deep-orange-10", State.APPLYING: "indigo", State.DONE: "positive",
    State.FAILED: "negative", State.CANCELLED: "grey-7", State.REVERTED: "brown",
    State.TARGET_MISSING: "deep-orange-10", State.ORPHANED: "deep-orange-10", State.DELETED: "grey-8",
}
ROLES: dict[Role, str] = {Role.VIDEO: "Video", Role.SUBTITLE: "Subtitle", Role.AUDIO: "Audio",
                          Role.EXTRA: "Extra", Role.SAMPLE: "Sample", Role.IGNORED: "Ignored"}
# plan/link status -> (label, colour); absent = nothing to mark
MARKS: dict[str, tuple[str, str]] = {
    "collision": ("Collision", "negative"),
    "skipped": ("Skipped", "grey-7"),
    "copied": ("Copied", "deep-orange-10"),
    "exists": ("Already there", "positive"),
    "linked": ("Linked", "positive"),
    "removed": ("Removed", "grey-7"),
    "superseded": ("Superseded", "grey-7"),
    "pending": ("Pending", "blue-grey-8"),
}


def state_color(state: str) -> str:
    """The badge colour of a state."""
    return COLOURS.get(state, "grey-7")  # type: ignore[call-overload]


def size(n: int | None) -> str:
    """Bytes as 1.4 GB (decimal units, like qBittorrent)."""
    if n is None:
        return "—"
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


def speed(n: int | None) -> str:
    """Bytes per second as 5.2 MB/s."""
    return f"{size(n or 0)}/s"


def duration(seconds: int | float | None) -> str:
    """A remaining time as 1 h 05 min; None or the 'infinite' ETA of qBittorrent is an em dash."""
    if seconds is None or seconds < 0 or seconds >= 8640000:
        return "—"
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, _ = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours < 1:
        return f"{minutes} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if days else f"{hours} h {minutes:02d} min"


def parse_time(value: str | None) -> datetime | None:
    """An RFC 3339 timestamp (with Z) as an aware datetime; None when missing or unreadable."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def ago(value: str | None, now: datetime | None = None) -> str:
    """How long ago, in words ("just now", "5 min ago", "3 d ago")."""
    moment = parse_time(value)
    if moment is None:
        return "—"
    delta = ((now or datetime.now(UTC)) - moment).total_seconds()
    if delta < 0:
        return "in " + duration(-delta)
    if delta < 45:
        return "just now"
    if delta < 3600:
        return f"{int(delta // 60) or 1} min ago"
    if delta < 86400:
        return f"{int(delta // 3600)} h ago"
    return f"{int(delta // 86400)} d ago"


def stamp(value: str | None) -> str:
    """A timestamp as '2026-12-03 07:20 UTC'."""
    moment = parse_time(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else "—"


def episode_code(season: int | None, episodes: Iterable[int]) -> str:
    """S01E02-E03, S01, E05 or an empty string."""
    numbers = list(episodes)
    text = f"S{season:02d}" if season is not None else ""
    if numbers:
        text += f"E{numbers[0]:02d}" + (f"-E{numbers[-1]:02d}" if len(numbers) > 1 else "")
    return text


def ranges(numbers: Iterable[int]) -> str:
    """[1, 2, 3, 5, 7, 8] as '1–3, 5, 7–8'."""
    ordered = sorted(set(numbers))
    parts: list[str] = []
    start = prev = None
    for n in ordered:
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            parts.append(f"{start}–{prev}" if prev != start else str(start))
            start = prev = n
    if start is not None:
        parts.append(f"{start}–{prev}" if prev != start else str(start))
    return ", ".join(parts)


def percent(value: float | None) -> str:
    """0.62 as 62 %."""
    return "—" if value is None else f"{round(value * 100)} %"


# qBittorrent's own state strings (4.x and 5.x) -> (what it means for the user, is it a problem)
TORRENT_STATES: dict[str, tuple[str, bool]] = {
    "stalledDL": ("Stalled: no peer is sending data", True),
    "metaDL": ("Fetching the torrent's metadata from peers", False),
    "forcedMetaDL": ("Fetching the torrent's metadata from peers", False),
    "error": ("qBittorrent reports an error", True),
    "missingFiles": ("qBittorrent cannot find the files", True),
    "pausedDL": ("Paused in qBittorrent", True),
    "stoppedDL": ("Stopped in qBittorrent", True),
    "queuedDL": ("Queued in qBittorrent", False),
    "checkingDL": ("qBittorrent is checking the files", False),
    "checkingResumeData": ("qBittorrent is checking the files", False),
    "moving": ("qBittorrent is moving the files", False),
    "allocating": ("qBittorrent is allocating space", False),
}


def torrent_words(state: str | None) -> tuple[str, bool] | None:
    """What qBittorrent's state means (and whether it is a problem), for the states worth a word."""
    return TORRENT_STATES.get(state or "")


def swarm(seeds: int | None, peers: int | None) -> str:
    """`3 seeds · 12 peers`, or '' before qBittorrent reported them."""
    if seeds is None and peers is None:
        return ""
    return f"{count(seeds or 0, 'seed')} · {count(peers or 0, 'peer')}"


def parse_episodes(text: str) -> list[int] | None:
    """'3', '3-4', '3–5', '1, 2' or 'E03' as episode numbers; '' is []; None when it is not that."""
    cleaned = text.strip().upper().replace("–", "-").replace("E", "")
    if not cleaned:
        return []
    found: list[int] = []
    for part in cleaned.replace(" ", "").split(","):
        first, dash, last = part.partition("-")
        # ASCII digits only: '²' is a digit to str.isdigit but not to int()
        if not _number(first) or (dash and not _number(last)) or len(first) > 5 or len(last) > 5:
            return None
        low, high = int(first), int(last or first)
        if high < low or high - low > 49:
            return None
        found.extend(range(low, high + 1))
    unique = sorted(set(found))
    return unique if len(unique) <= 50 else None


def _number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def episodes_text(episodes: Iterable[int]) -> str:
    """[3, 4] as '3-4', [1, 3] as '1, 3' (what `parse_episodes` reads back)."""
    return ranges(episodes).replace("–", "-")
