"""A failed command as an `error` event: whoever sent it hears back, even without reading responses."""

from __future__ import annotations

from jellybit import clock
from jellybit.protocol import READ_ONLY_COMMANDS, Command, EventPayload, EventType, Response


def failure_event(name: str, download_id: str | None, response: str | bytes) -> EventPayload | None:
    """The `error` event for a failed command that would have changed something, else None.

    Home Assistant automations and scripts do not read their response topic; the event entity and
    every notification on `events` do. Reads (`get`, `list`, `titles`) change nothing and their asker
    shows the answer, so they are left out.
    """
    if name in READ_ONLY_COMMANDS:
        return None
    try:
        answer = Response.model_validate_json(response)
    except ValueError:
        return None
    if answer.status != "error" or answer.error is None:
        return None
    verb = name.replace("_", " ").capitalize() if name in set(Command) else "A command"
    sentence = f"{verb} failed: {answer.error.message}"[:500]
    return EventPayload(event_type=EventType.ERROR.value, id=download_id or "", command=name[:64],
                        code=answer.error.code, message=sentence, reason=sentence, at=clock.now())
