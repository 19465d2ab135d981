"""`jellybit healthcheck`: the database and storage, the broker, the worker answering on the bus, the
outside services as the worker sees them (qBittorrent, each metadata provider, the LLM, Jellyfin,
Telegram: from its retained `info`), the panel.

Used by docker-compose health checks; exit 0 when every check passes, 1 otherwise. Where the broker
binds each account to one client id (the compose stack), a check must not connect with an account
a running process uses — it would take over that process's session — so compose checks the worker
by its database and the panel by HTTP.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from typing import TextIO

import httpx

from jellybit.client import JellybitClient, NoAnswer
from jellybit.config import Config
from jellybit.present import service_line, service_state
from jellybit.protocol import AVAILABILITY_ONLINE, Command, InfoPayload


@dataclass(frozen=True)
class Check:
    """One health check result."""

    name: str
    ok: bool
    detail: str
    state: str | None = None        # an outside service: ok, refused, unreachable, not configured, …
    hint: str | None = None         # what to do about it


async def check_database(config: Config) -> Check:
    """The database opens, every migration is applied, and SQLite's quick check passes."""
    from jellybit.adapters.store import Store, load_migrations

    path = config.storage.database
    if not path.exists():
        return Check("database", False, f"{path} does not exist (run `jellybit migrate` or start the worker)")
    store = Store(path)
    try:
        await store.open(migrate=False)
        applied = await store.applied_migrations()
        wanted = [m.version for m in load_migrations()]
        if applied != wanted:
            return Check("database", False, f"migrations applied {applied}, expected {wanted}")
        row = await store.fetchone("PRAGMA quick_check")
        verdict = row[0] if row else "no answer"
        return Check("database", verdict == "ok", f"{path}: quick_check {verdict}")
    except Exception as exc:  # report, never crash, in a health check
        return Check("database", False, f"{path}: {exc}")
    finally:
        await store.close()


# A service counts as healthy unless the worker could not use it; "not configured" and "starting"
# are reported with their hint but do not fail the check.
FAILING_STATES = frozenset({"refused", "unreachable"})


def service_checks(info: InfoPayload) -> list[Check]:
    """One check per outside service of the worker's `info`."""
    systems = [("qbittorrent", info.qbittorrent),
               *((f"metadata.{name}", status) for name, status in sorted(info.metadata.items())),
               ("llm", info.llm), ("jellyfin", info.jellyfin), ("telegram", info.telegram)]
    checks = []
    for name, status in systems:
        state = service_state(status)
        checks.append(Check(name, state not in FAILING_STATES, service_line(status), state, status.hint))
    return checks


async def _retained_info(client: JellybitClient, timeout: float) -> InfoPayload | None:  # noqa: ASYNC109
    try:
        async with asyncio.timeout(timeout):
            async for _topic, payload, _retained in client.watch(client.topics.info):
                if payload:
                    return InfoPayload.model_validate_json(payload)
    except (TimeoutError, ValueError):
        return None
    return None


async def check_bus(config: Config, timeout: float, services: bool = False) -> list[Check]:  # noqa: ASYNC109
    """The broker accepts us, the worker says `online` and answers a request; with `services`, each
    outside service as the worker's `info` reports it."""
    try:
        async with JellybitClient(config.mqtt, name="health") as client:
            checks = [Check("broker", True, config.mqtt.url)]
            availability = b""
            try:
                async with asyncio.timeout(timeout):
                    async for _topic, payload, retained in client.watch(client.topics.availability):
                        availability = payload
                        if retained or payload:
                            break
            except TimeoutError:
                pass
            online = availability.decode(errors="replace") == AVAILABILITY_ONLINE
            checks.append(Check("worker availability", online, availability.decode(errors="replace")
                                or "nothing retained"))
            # One read of the retained `info` serves both the storage faults and the services.
            info = await _retained_info(client, timeout) if online or services else None
            if online:
                from jellybit.cli.health_storage import worker_storage

                checks.extend(worker_storage(info))
            try:
                response = await client.request(Command.LIST, {"limit": 1}, timeout=timeout)
                checks.append(Check("worker answers", response.status == "ok",
                                    f"list answered {response.status}"))
            except NoAnswer as exc:
                checks.append(Check("worker answers", False, str(exc)))
            if services:
                checks.extend(service_checks(info) if info is not None else
                              [Check("services", False, "the worker published no info (is it running?)")])
            return checks
    except NoAnswer as exc:
        return [Check("broker", False, str(exc))]


async def check_panel(config: Config, timeout: float, url: str | None = None) -> Check:  # noqa: ASYNC109
    """The panel answers HTTP on its port, or at `url` (a redirect to the login page counts)."""
    host = config.panel.host if config.panel.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    url = url or f"http://{host if ':' not in host else f'[{host}]'}:{config.panel.port}/"
    try:
        async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
            reply = await client.get(url, follow_redirects=False)
    except httpx.HTTPError as exc:
        return Check("panel", False, f"{url}: {exc or type(exc).__name__}")
    return Check("panel", reply.status_code < 500, f"{url} answered {reply.status_code}")


async def check_jellyfin_libraries(config: Config) -> list[Check]:
    """Jellyfin's libraries cover the movies and series roots with the right type (docs/jellyfin.md)."""
    if not config.jellyfin.enabled:
        return [Check("jellyfin libraries", False, "jellyfin is not enabled in the configuration")]
    from jellybit.adapters.jellyfin_library import library_checks

    found = await library_checks(config.jellyfin, config.paths)
    return [Check(name, ok, detail) for name, ok, detail in found]


async def healthcheck(config: Config, *, database: bool, bus: bool, timeout: float,  # noqa: ASYNC109
                      panel: bool = False, panel_url: str | None = None,
                      services: bool = False, jellyfin_libraries: bool = False) -> list[Check]:
    """Run the selected checks."""
    checks: list[Check] = []
    if database:
        from jellybit.cli.health_storage import check_storage

        checks.append(await check_database(config))
        checks.extend(check_storage(config))
    if bus:
        checks.extend(await check_bus(config, timeout, services))
    if panel or panel_url:
        checks.append(await check_panel(config, timeout, panel_url))
    if jellyfin_libraries:
        checks.extend(await check_jellyfin_libraries(config))
    return checks


def run_healthcheck(config: Config, *, database: bool = True, bus: bool = True, timeout: float = 5.0,
                    as_json: bool = False, out: TextIO = sys.stdout, panel: bool = False,
                    panel_url: str | None = None, services: bool = True,
                    jellyfin_libraries: bool = False) -> int:
    """Print the checks; 0 when all pass."""
    checks = asyncio.run(healthcheck(config, database=database, bus=bus, timeout=timeout, panel=panel,
                                     panel_url=panel_url, services=services,
                                     jellyfin_libraries=jellyfin_libraries))
    healthy = all(c.ok for c in checks)
    if as_json:
        out.write(json.dumps({"healthy": healthy,
                              "checks": [c.__dict__ for c in checks]}, ensure_ascii=False) + "\n")
    else:
        for c in checks:
            out.write(f"{'ok  ' if c.ok else 'FAIL'}  {c.name}: {c.detail}\n")
    return 0 if healthy else 1
