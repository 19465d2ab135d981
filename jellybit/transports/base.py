"""What every transport is to the worker (Frigate's communicator, Zigbee2MQTT's extension): a name,
the loops it runs, and a goodbye. `app.py` decides once which transports run and holds them as
`Transport`s; it never reaches into one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

Loop = Callable[[], Awaitable[None]]
Supervise = Callable[[str, Loop], object]        # the supervisor's `supervise(name, loop)`


@runtime_checkable
class Transport(Protocol):
    """One way in and out of the worker (MQTT, Telegram): it turns bytes into commands and back."""

    name: str

    def start(self, supervise: Supervise) -> None:
        """Hand its long-running loops to `supervise`, each under its own name (restarted on a crash)."""
        ...

    async def stop(self) -> None:
        """Say goodbye before its loops are cancelled (MQTT: the retained `offline`); never raises."""
        ...

