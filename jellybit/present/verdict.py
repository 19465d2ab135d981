"""The verdict: what happened to a download or what is needed of you, in one line that never
contradicts its state (the panel's headline, the CLI's first line of `show`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jellybit.present.words import count, ordered_reasons, reason_words, state_name, title_line
from jellybit.protocol import DownloadPayload, RecognitionDetail, State, TransitionRow

PROBLEMS = {State.TARGET_MISSING: "The library files are gone; the download is still there (Relink).",
            State.ORPHANED: "The torrent is gone from qBittorrent; the library files remain.",
            State.DELETED: "Both the torrent and the library files are gone."}
STOPPED = {State.CANCELLED: "Nothing was laid out.", State.REVERTED: "Its library files were removed."}


@dataclass(frozen=True)
class Verdict:
    """The one line at the top of a download: `tone` is decide | done | working | problem | stopped."""

    tone: str
    headline: str
    detail: str = ""


def _applied_by_human(timeline: Iterable[TransitionRow]) -> bool:
    last = next((t for t in reversed(list(timeline)) if t.to is State.APPLYING), None)
    return bool(last and last.actor == "human")


def verdict(download: DownloadPayload, recognition: RecognitionDetail | None,
            timeline: Iterable[TransitionRow] = ()) -> Verdict:
    """What happened or what is needed, in one line that never contradicts the state."""
    state = download.state
    title = title_line((recognition.title if recognition else None) or download.title,
                       (recognition.year if recognition else None) or download.year)
    if state is State.REVIEW:
        blocking = [r for r in ordered_reasons(recognition.reasons if recognition else []) if r.blocking]
        # The kind of doubt in general; the reasons below say it for this download.
        first = reason_words(blocking[0]) if blocking else ("Nothing confirmed what this is.", "")
        why = first[1] or first[0]
        more = f" (and {count(len(blocking) - 1, 'more reason')})" if len(blocking) > 1 else ""
        return Verdict("decide", "Needs your decision", why + more)
    if state in (State.DONE, State.APPLYING):
        verb = "Laid out" if state is State.DONE else "Laying out"
        if _applied_by_human(timeline):
            return Verdict("done", f"{verb} as you decided", title)
        return Verdict("done", f"{verb} automatically", f"{title} (a confirmed match, nothing in doubt)"
                       if title else "A confirmed match, nothing in doubt")
    if state is State.RECOGNIZING:
        return Verdict("working", "Recognizing…", "Reading the names, asking the metadata providers.")
    if state in (State.QUEUED, State.DOWNLOADING):
        return Verdict("working", "Downloading", "Recognition runs once the download is complete.")
    error = download.error
    if state is State.FAILED:
        return Verdict("problem", "Failed", (error.message or error.code) if error else "")
    if state in PROBLEMS:
        return Verdict("problem", state_name(state), PROBLEMS[state])
    return Verdict("stopped", state_name(state), STOPPED.get(state, ""))


def verdict_line(found: Verdict) -> str:
    """The verdict as one line of text: 'Needs your decision: Two candidates are close'."""
    if not found.detail:
        return found.headline
    return f"{found.headline}{' ' if found.headline.endswith('…') else ': '}{found.detail}"
