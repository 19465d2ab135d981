"""The health of one outside service, as the status page and the `info` topic show it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServiceStatus:
    """One service's state: reachable or not, with a sentence for humans (never a secret)."""

    name: str
    ok: bool
    message: str
    enabled: bool = True
    version: str | None = None
    refused: bool = False           # it answered, and refused the key or token
