"""`jellybit healthcheck`'s storage checks: the database's disk and the library roots, seen from here
and (with the bus) as the worker reports them on `<base>/info` (docs/mqtt-api.md, "Storage faults")."""

from __future__ import annotations

from jellybit.adapters.storage_watch import snapshot
from jellybit.cli.health import Check
from jellybit.config import Config
from jellybit.protocol import InfoPayload


def _size(free: int | None) -> str:
    if free is None:
        return "free space unknown"
    return f"{free / (1 << 30):.1f} GiB free" if free >= 1 << 30 else f"{free / (1 << 20):.1f} MiB free"


def check_storage(config: Config) -> list[Check]:
    """Each storage component: full (under 1 MiB free), read-only, or (a library) missing."""
    roots = {"movies": config.paths.movies, "series": config.paths.series}
    checks = []
    for component, (fault, free) in snapshot(config.storage.database, roots).items():
        if fault is None:
            checks.append(Check(f"storage {component}", True, _size(free)))
        else:
            checks.append(Check(f"storage {component}", False, f"{fault.code}: {fault.message}"))
    return checks


def worker_storage(info: InfoPayload | None) -> list[Check]:
    """The storage faults the worker reports on its retained `info` (a lock, a database file gone)."""
    if info is None:
        return [Check("worker storage", False, "no info retained")]
    faults = [(name, c) for name, c in sorted(info.components.items()) if c.code]
    if not faults:
        return [Check("worker storage", True, "no storage fault")]
    return [Check(f"worker storage {name}", False, f"{c.code}: {c.error or ''}") for name, c in faults]
