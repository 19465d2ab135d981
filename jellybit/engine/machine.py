"""The one function that changes a download's state: persist first, then publish."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from jellybit.core.models import Download, Transition
from jellybit.core.states import Actor, State
from jellybit.core.store_port import StorePort
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.logs import for_download

log = logging.getLogger(__name__)

# Entering one of these states also emits its own event after `state_changed`.
_FOLLOW_UP: dict[State, EventKind] = {
    State.REVIEW: EventKind.REVIEW_REQUESTED,
    State.DONE: EventKind.DONE,
    State.FAILED: EventKind.FAILED,
}


async def change_state(
    store: StorePort,
    bus: EventBus,
    download_id: str,
    to: State,
    *,
    reason: str,
    actor: Actor,
    expected: State | Iterable[State] | None = None,
    fields: dict[str, Any] | None = None,
    reactivate: bool = False,
) -> Download:
    """Move a download to `to`, commit it with its history row, then publish the events.

    `reactivate=True` is the guarded settled -> active path (retry, relink): it raises
    Conflict when another active download owns one of the infohashes. Raises InvalidState
    when the table forbids the move or the current state is not `expected`; nothing is
    published when the store refuses.
    """
    if reactivate:
        download, transition = await store.activate_if_no_other_active(
            download_id, to, reason=reason, actor=actor, expected=expected, fields=fields
        )
    else:
        download, transition = await store.transition(
            download_id, to, reason=reason, actor=actor, expected=expected, fields=fields
        )
    log.info(
        "state %s -> %s (%s)", transition.from_state, transition.to_state, reason,
        **for_download(download.id, from_state=transition.from_state, to_state=transition.to_state,
                       reason=reason, actor=actor.value),
    )
    for event in events_for(download, transition):
        bus.publish(event)
    return download


def events_for(download: Download, transition: Transition) -> list[Event]:
    """The events one committed transition emits: `state_changed`, then review/done/failed."""
    base = {
        "download_id": download.id,
        "name": download.display_name,
        "from_state": transition.from_state,
        "to_state": transition.to_state,
        "reason": transition.reason,
        "actor": transition.actor,
        "at": transition.created_at,
    }
    events = [Event(EventKind.STATE_CHANGED, **base)]
    follow_up = _FOLLOW_UP.get(transition.to_state)
    if follow_up is EventKind.FAILED:
        events.append(Event(follow_up, **base, data={"error_code": download.error_code,
                                                      "error_msg": download.error_msg}))
    elif follow_up is EventKind.REVIEW_REQUESTED and download.awaiting_files:
        # Asked while it downloads: the ping says how far ("still downloading, 37 %").
        events.append(Event(follow_up, **base, data={"progress": download.progress}))
    elif follow_up is not None:
        events.append(Event(follow_up, **base))
    return events
