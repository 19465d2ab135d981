"""The words every face shows: state names, the one-line title, reasons in order, a work's pages.

Provider names and their order are the provider table's (`core/providers.py`, through the protocol);
`jellybit.present` re-exports `provider_name` so that a face finds every word in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from jellybit.protocol import (
    LIVE_STATUSES,
    CandidatePayload,
    LinkStatus,
    ReasonPayload,
    State,
    SystemStatus,
    provider_order,
)

STATE_NAMES: dict[State, str] = {
    State.QUEUED: "Queued",
    State.DOWNLOADING: "Downloading",
    State.RECOGNIZING: "Recognizing",
    State.REVIEW: "Needs review",
    State.APPLYING: "Applying",
    State.DONE: "Done",
    State.FAILED: "Failed",
    State.CANCELLED: "Cancelled",
    State.REVERTED: "Undone",
    State.TARGET_MISSING: "Library files missing",
    State.ORPHANED: "Torrent gone",
    State.DELETED: "Deleted",
}
# Link statuses that own a file in the library right now (the core's rule).
LIVE_LINKS: frozenset[LinkStatus] = LIVE_STATUSES


class Weighed(Protocol):
    """A reason as the faces order it."""

    @property
    def blocking(self) -> bool: ...

    @property
    def weight(self) -> float: ...


ReasonT = TypeVar("ReasonT", bound=Weighed)


def state_name(state: State | str) -> str:
    """A state in words ("Needs review"); an unknown one from its value."""
    try:
        return STATE_NAMES[State(state)]
    except ValueError:
        return str(state).replace("_", " ").capitalize()


def title_line(title: str | None, year: int | None = None, media_type: str | None = None) -> str:
    """A download or a work in one line: 'Fargo (2014) · series' ('' without a title)."""
    if not title:
        return ""
    text = f"{title} ({year})" if year else title
    return f"{text} · {media_type}" if media_type else text


def is_live(status: str | None) -> bool:
    """Whether a library file row with this status is in the library now."""
    return status in LIVE_LINKS


def sentence(text: str | None) -> str:
    """The text with a capital first letter (reason messages start in lower case)."""
    text = (text or "").strip()
    return text[:1].upper() + text[1:]


def count(n: int, noun: str) -> str:
    """`1 file`, `3 files`: a number with its noun in the right form."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def ordered_reasons(reasons: Iterable[ReasonT]) -> list[ReasonT]:
    """Blocking reasons first, then the weightiest; notes after them."""
    return sorted(reasons, key=lambda r: (not r.blocking, -r.weight))


def reason_words(reason: ReasonPayload) -> tuple[str, str]:
    """(the reason's own sentence, what its kind means in general — '' when it says the same)."""
    message = sentence(reason.message)
    meaning = sentence(reason.meaning or "")
    if not message:
        return meaning or reason.code.replace("_", " "), ""
    return message, meaning if meaning and meaning.casefold() not in message.casefold() else ""


def pages(item: CandidatePayload) -> list[tuple[str, str]]:
    """(provider, page) of every provider that lists the work, in the providers' order (unknown ones last)."""
    links = dict(item.links)
    if item.url:
        links.setdefault(item.provider, item.url)
    return [(provider, links[provider]) for provider in provider_order(list(links))]


def service_state(status: SystemStatus) -> str:
    """An outside service's state as `info` names it: ok, refused, unreachable, not configured, starting."""
    if status.state:
        return status.state
    if status.connected is not None:
        return "ok" if status.connected else "unreachable"
    return "not configured" if not status.enabled else "starting"


def service_heading(status: SystemStatus) -> str:
    """An outside service's state as a heading shows it: 'OK', 'Refused', 'Not configured'."""
    state = service_state(status)
    return "OK" if state == "ok" else sentence(state)


def service_detail(status: SystemStatus) -> str:
    """What the state word leaves out: the service's detail, unless it only repeats the state."""
    return status.detail if status.detail and status.detail != service_state(status) else ""


def service_line(status: SystemStatus) -> str:
    """One service in a line: 'refused: 401 Unauthorized — the key was refused: check …'."""
    state, detail = service_state(status), service_detail(status)
    line = f"{state}: {detail}" if detail else state
    return f"{line} — {status.hint}" if status.hint else line
