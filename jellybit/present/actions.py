"""Which actions a download's state allows, read from the engine's one table (`COMMAND_STATES`).

A face asks `allowed(action, state)` before it offers a button, a command line or a menu entry, so it
never offers what the engine refuses in that state, and never hides what the engine would do.
"""

from __future__ import annotations

from jellybit.protocol import COMMAND_STATES, State

# Every state-bound action, in the table's order (as the table was at import; `actions` reads it live).
ACTIONS: tuple[str, ...] = tuple(COMMAND_STATES)


def allowed(action: str, state: State | str | None) -> bool:
    """Tell whether the engine accepts `action` for a download in `state` (an unknown one: no)."""
    return state is not None and state in COMMAND_STATES.get(action, frozenset())


def actions(state: State | str | None) -> tuple[str, ...]:
    """The actions a download in `state` allows, in the table's order."""
    return tuple(action for action in COMMAND_STATES if allowed(action, state))


def states_for(action: str) -> frozenset[State]:
    """The states in which the engine accepts `action` (none for an action it does not know)."""
    return COMMAND_STATES.get(action, frozenset())
