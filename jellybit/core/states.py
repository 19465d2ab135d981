"""Download states and the one transition table (spec §3)."""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    """Every state a download can be in."""

    QUEUED = "queued"
    DOWNLOADING = "downloading"
    RECOGNIZING = "recognizing"
    REVIEW = "review"
    APPLYING = "applying"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    REVERTED = "reverted"
    TARGET_MISSING = "target_missing"
    ORPHANED = "orphaned"
    DELETED = "deleted"


class Actor(StrEnum):
    """Who caused a transition."""

    WORKER = "worker"
    HUMAN = "human"
    RECONCILE = "reconcile"


ACTIVE_STATES: frozenset[State] = frozenset(
    {State.QUEUED, State.DOWNLOADING, State.RECOGNIZING, State.REVIEW, State.APPLYING}
)
SETTLED_STATES: frozenset[State] = frozenset(set(State) - ACTIVE_STATES)

# (from, to) -> short description of the path. The settled -> active rows are the
# guarded paths (retry, relink); the store refuses settled -> active unless the
# caller goes through its activate-if-no-other-active guard.
TRANSITIONS: dict[tuple[State, State], str] = {
    (State.QUEUED, State.DOWNLOADING): "qBittorrent has the torrent",
    (State.DOWNLOADING, State.RECOGNIZING): "download complete",
    (State.DOWNLOADING, State.FAILED): "torrent error, stall, metadata timeout or source missing",
    (State.QUEUED, State.FAILED): "qBittorrent refused the torrent",
    (State.RECOGNIZING, State.APPLYING): "confident, confirmed match",
    (State.RECOGNIZING, State.REVIEW): "needs a human decision",
    (State.RECOGNIZING, State.FAILED): "source files vanished",
    (State.REVIEW, State.APPLYING): "apply",
    (State.REVIEW, State.RECOGNIZING): "refine, or retry after a metadata outage",
    (State.REVIEW, State.CANCELLED): "reject",
    (State.APPLYING, State.DONE): "laid out",
    (State.APPLYING, State.REVIEW): "collision",
    (State.APPLYING, State.FAILED): "layout I/O error",
    (State.DONE, State.REVERTED): "undo",
    (State.DONE, State.TARGET_MISSING): "reconcile: library files gone",
    (State.DONE, State.ORPHANED): "reconcile: torrent gone",
    (State.DONE, State.DELETED): "reconcile: both gone",
    (State.TARGET_MISSING, State.APPLYING): "relink",
    (State.TARGET_MISSING, State.DONE): "reconcile: library files back",
    (State.TARGET_MISSING, State.DELETED): "reconcile: torrent gone too",
    (State.TARGET_MISSING, State.REVERTED): "undo",
    (State.ORPHANED, State.REVERTED): "undo",
    (State.ORPHANED, State.DELETED): "reconcile: library files gone",
    (State.FAILED, State.QUEUED): "retry",
    (State.FAILED, State.DOWNLOADING): "retry",
    (State.FAILED, State.RECOGNIZING): "retry",
    (State.FAILED, State.APPLYING): "retry",
    (State.CANCELLED, State.QUEUED): "retry",
    (State.CANCELLED, State.DOWNLOADING): "retry",
    (State.CANCELLED, State.RECOGNIZING): "retry",
    (State.REVERTED, State.APPLYING): "retry",
    (State.REVERTED, State.RECOGNIZING): "retry",
}
for _state in ACTIVE_STATES:
    TRANSITIONS.setdefault((_state, State.CANCELLED), "cancel")
del _state


# command -> the states in which the engine accepts it: the one rule every face reads (through
# `jellybit.present`) and `engine/commands.py` enforces. A new state-bound command is one row here.
COMMAND_STATES: dict[str, frozenset[State]] = {
    "apply": frozenset({State.REVIEW}),           # also per film of a movie pack, with a candidate
    "upgrade": frozenset({State.REVIEW}),         # keep both / replace / skip, when the review asks it
    "refine": frozenset({State.REVIEW}),
    "reject": frozenset({State.REVIEW}),
    "defer": frozenset({State.REVIEW}),
    "undo": frozenset({State.DONE, State.TARGET_MISSING, State.ORPHANED}),
    "retry": frozenset({State.FAILED, State.CANCELLED, State.REVERTED}),
    "cancel": ACTIVE_STATES,
    "relink": frozenset({State.TARGET_MISSING}),
}


def is_active(state: State | str) -> bool:
    """Tell whether a state counts against the one-active-download-per-infohash rule."""
    return State(state) in ACTIVE_STATES


def can_transition(source: State | str, target: State | str) -> bool:
    """Tell whether the table allows source -> target."""
    return (State(source), State(target)) in TRANSITIONS


def is_reactivation(source: State | str, target: State | str) -> bool:
    """Tell whether source -> target goes from settled back to active (a guarded path)."""
    return not is_active(source) and is_active(target)


# Laid-out downloads reconciliation compares with qBittorrent and the libraries.
RECONCILABLE = (State.DONE, State.TARGET_MISSING, State.ORPHANED)


def drift(state: State, torrent_present: bool, targets_present: bool | None) -> State | None:
    """The state reconciliation moves a laid-out download to (spec §3), or None to leave it."""
    if state not in RECONCILABLE or targets_present is None:
        return None
    if state is State.DONE:
        target = {
            (True, True): None, (True, False): State.TARGET_MISSING,
            (False, True): State.ORPHANED, (False, False): State.DELETED,
        }[(torrent_present, targets_present)]
    elif state is State.TARGET_MISSING:
        target = State.DONE if targets_present else (None if torrent_present else State.DELETED)
    else:
        target = None if targets_present else State.DELETED
    return target if target is not None and can_transition(state, target) else None
