"""Wiring: the one place that knows the concrete classes. `build_app(config)`, then `run(config)`."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any

from jellybit import clock
from jellybit.adapters import resolver
from jellybit.adapters.jellyfin import JellyfinRefresher
from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.offload import Offloader, offloaded_parser
from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.adapters.storage_watch import StorageWatch
from jellybit.adapters.store import Store
from jellybit.config import Config
from jellybit.core.addresses import AllowList
from jellybit.core.models import Download
from jellybit.core.ports import Layouter, Recognizer
from jellybit.engine.commands import Commands
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.source_guard import SourceGuard
from jellybit.engine.supervisor import ComponentHealth, Fault, GaveUp, Supervisor
from jellybit.engine.worker import Worker
from jellybit.errors import StorageFault
from jellybit.transports.base import Loop, Transport

log = logging.getLogger(__name__)

STOP_TIMEOUT = 60.0
POLL = "poll"                 # the supervised loops; each transport names its own ("mqtt", "telegram", …)
RECONCILE = "reconcile"
JELLYFIN = "jellyfin"         # the confirmation that Jellyfin lists done downloads
STORAGE = "storage-watch"     # the loop that probes the database's disk and the library roots
COMMAND_RESULT_DAYS = 30      # how long a transaction is remembered for de-duplication


@dataclass
class App:
    """Every long-lived object of one worker process, and the order to start and stop them."""

    config: Config
    store: Store
    bus: EventBus
    client: QbittorrentClient
    recognizer: Recognizer
    layouter: Layouter
    refresher: JellyfinRefresher
    worker: Worker
    commands: Commands
    transports: tuple[Transport, ...] = ()   # MQTT, Telegram: started after the worker, stopped first
    jellyfin: Any = None                     # engine/jellyfin_confirm.JellyfinConfirmer when Jellyfin is on
    closers: list[Callable[[], Awaitable[Any]]] = field(default_factory=list)   # LLM, metadata clients
    supervisor: Supervisor = field(default_factory=Supervisor)
    watch: StorageWatch | None = None        # storage faults (database disk, library roots)
    _transport_loops: list[str] = field(default_factory=list, init=False, repr=False)   # what they supervise

    def transport(self, name: str) -> Transport | None:
        """The running transport called `name` ("mqtt", "telegram"), None when it is not wired."""
        return next((t for t in self.transports if t.name == name), None)

    def _supervise_transport(self, name: str, loop: Loop) -> None:
        self._transport_loops.append(name)
        self.supervisor.supervise(name, loop)

    async def start(self) -> None:
        """Open (and migrate) the store, then start the worker and the transports, each supervised."""
        await self.store.open()
        purged = await self.store.cache_purge_expired()
        older = clock.format_time(clock.utcnow() - timedelta(days=COMMAND_RESULT_DAYS))
        forgotten = await self.store.purge_command_results(older)
        if purged or forgotten:
            log.info("store housekeeping",
                     extra={"cache_purged": purged, "command_results_purged": forgotten})
        await self.worker.start()
        self.worker.on_fault = partial(self.supervisor.report, POLL)
        self.supervisor.supervise(POLL, partial(self.worker.run, reconcile=False))
        self.supervisor.supervise(RECONCILE, self.worker.run_reconciler)
        if self.watch is not None:
            self.supervisor.supervise(STORAGE, self.watch.run)
        for transport in self.transports:
            transport.start(self._supervise_transport)
        if self.jellyfin is not None:
            self.supervisor.supervise(JELLYFIN, self.jellyfin.run)
        log.info("jellybit started", extra={"database": str(self.config.storage.database)})

    async def wait(self) -> None:
        """Return only by raising `GaveUp`: a component kept crashing although it was restarted."""
        await self.supervisor.wait()

    async def stop(self) -> None:
        """Stop in order: transports (offline), the worker (cycle and stages finish), clients, store."""
        self.supervisor.stopping()
        for transport in self.transports:
            with contextlib.suppress(Exception):
                await transport.stop()
        for name in (*self._transport_loops, RECONCILE, JELLYFIN, STORAGE):
            task = self.supervisor.task(name)
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await self.worker.stop()
        worker_task = self.supervisor.task(POLL)
        if worker_task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(worker_task), STOP_TIMEOUT)
            except TimeoutError:
                log.warning("the worker did not stop in time; cancelling it")
            except Exception:
                log.exception("the worker ended with an error")
        await self.supervisor.stop()
        await self.refresher.close()
        if self.jellyfin is not None:
            with contextlib.suppress(Exception):
                await self.jellyfin.lookup.close()
        for close in self.closers:
            with contextlib.suppress(Exception):
                await close()
        await self.client.close()
        await self.store.close()
        log.info("jellybit stopped")


Probe = Callable[[], Awaitable[Any]]


def _probes(config: Config, llm: Any, providers: list[Any], refresher: JellyfinRefresher | None,
            libraries: Any = None) -> dict[str, Probe]:
    """Status probes for the `info` topic: LLM, each metadata provider, Jellyfin (with what to do)."""
    from jellybit.adapters.llm.client import LlmKeyRefused
    from jellybit.adapters.metadata import status as provider_status
    from jellybit.errors import JellybitError
    from jellybit.protocol import SystemStatus
    from jellybit.transports import service_health as health

    probes: dict[str, Probe] = {}
    if llm is not None:
        async def llm_probe() -> SystemStatus:
            try:
                return health.llm_status(config, ok=True, message=str(await llm.ping())[:200])
            except JellybitError as exc:
                return health.llm_status(config, ok=False, message=exc.message[:200],
                                         refused=isinstance(exc, LlmKeyRefused))
        probes["llm"] = llm_probe
    for provider in providers:
        async def provider_probe(provider: Any = provider) -> SystemStatus:
            (service,) = await provider_status([provider])
            return health.provider_status(config, provider.name, service)
        probes[f"metadata.{provider.name}"] = provider_probe
    if refresher is not None and refresher.config.enabled:
        async def jellyfin_probe() -> SystemStatus:
            status = health.jellyfin_status(config, await refresher.ping())
            problems = [c.problem for c in (libraries.last_checks if libraries is not None else ())
                        if c.problem]
            return health.jellyfin_uncovered(status, problems)   # a root no library covers: a warning
        probes["jellyfin"] = jellyfin_probe
    return probes


def _recognizer(config: Config, store: Store
                ) -> tuple[Recognizer, list[Callable[[], Awaitable[Any]]], Any, list[Any]]:
    """The recognizer, what to close on stop, and its LLM and metadata providers (for status)."""
    from jellybit.adapters.library.disk import Sources
    from jellybit.adapters.llm import OpenAiLlm
    from jellybit.adapters.metadata import build_providers, close_providers
    from jellybit.adapters.subtitles import FileSubtitleSampler
    from jellybit.engine.recognizer import RecognitionEngine

    llm = OpenAiLlm(config.llm) if config.llm.enabled else None
    providers = build_providers(config.metadata, store)
    closers: list[Callable[[], Awaitable[Any]]] = [lambda: close_providers(providers)]
    if llm is not None:
        closers.append(llm.close)
    # Untagged subtitles are read (a bounded head, never written) where Sources puts them: inside downloads.
    languages = FileSubtitleSampler(lambda download: Sources(download, config.paths).path)
    recognizer = RecognitionEngine(llm=llm, providers=providers, config=config.recognition,
                                   languages=languages)
    return recognizer, closers, llm, providers


def _bridge(config: Config, store: Store, bus: EventBus, commands: Commands,
            probes: dict[str, Probe] | None = None, supervisor: Supervisor | None = None,
            watch: StorageWatch | None = None, telegram: Any = None) -> Transport:
    """The MQTT bridge with its state and Home Assistant discovery (None when not installed)."""
    from jellybit.protocol import Topics
    from jellybit.transports import service_health as health
    from jellybit.transports.homeassistant import HomeAssistantDiscovery
    from jellybit.transports.mqtt import EngineState, MqttBridge, build_handlers

    live = {}
    if telegram is not None:
        bot = telegram.health
        live["telegram"] = lambda: health.telegram_status(config, running=bot.reached,
                                                          error=bot.down_since_error, refused=bot.refused)
    state = EngineState(commands, bus, config, statuses=probes, live=live,
                        components=storage_components(supervisor, watch) if supervisor is not None else None)
    extensions: tuple[Any, ...] = ()
    if config.mqtt.discovery:
        topics = Topics(config.mqtt.base_topic, config.mqtt.discovery_prefix)
        extensions = (HomeAssistantDiscovery(topics, panel_url=config.panel.base_url),)
    return MqttBridge(config.mqtt, handlers=build_handlers(commands), state=state, results=store,
                      extensions=extensions)


def build_app(config: Config, *, recognizer: Recognizer | None = None, layouter: Layouter | None = None,
              mqtt: bool = True) -> App:
    """Build (not start) every component from the configuration."""
    store = Store(config.storage.database)
    bus = EventBus()
    watch = _storage_watch(config, store, bus)
    client = QbittorrentClient(config.qbittorrent)
    closers: list[Callable[[], Awaitable[Any]]] = []
    llm: Any = None
    providers: list[Any] = []
    if recognizer is None:
        recognizer, closers, llm, providers = _recognizer(config, store)
    layouter = layouter or LayoutEngine(store, config.paths, upgrades=config.layout.upgrades, watch=watch)
    refresher = JellyfinRefresher(config.jellyfin)
    confirmer = _confirmer(config, store, bus)

    def on_done(download: Download) -> Awaitable[None] | None:
        refresher.request_refresh(download.display_name)
        return confirmer.track(download) if confirmer is not None else None

    worker = Worker(store, bus, client, recognizer, layouter, worker=config.worker,
                    qbittorrent=config.qbittorrent, paths=config.paths, on_done=on_done)
    # .torrent files are read in a child process; every host a source names is resolved and checked.
    guard = SourceGuard(AllowList.parse(config.qbittorrent.allow_private_hosts), resolve=resolver.resolve)
    # One at a time, each within its memory budget: twenty hostile files cost one budget, not twenty.
    # Three may wait: the bridge runs four requests at once, so a burst of small files is never busy.
    parse = offloaded_parser(Offloader(slots=1, waiting=3, timeout=config.worker.parse_timeout,
                                       memory=config.worker.parse_memory_mib * 1024 * 1024))
    commands = Commands(store, bus, worker, worker_config=config.worker,
                        tag_prefix=config.qbittorrent.tag_prefix, parse=parse, guard=guard)
    longest = config.worker.restart_backoff_max
    supervisor = Supervisor(notify=partial(_publish_fault, bus), first_backoff=min(1.0, longest),
                            max_backoff=longest, max_crashes=config.worker.max_restarts)
    libraries = confirmer.lookup if confirmer is not None else None
    telegram = None
    if config.telegram.enabled:
        from jellybit.transports.telegram.transport import TelegramTransport

        config.telegram.required_token()     # the worker runs the bot; nothing else needs its token
        telegram = TelegramTransport.from_config(config, commands, bus, store)
    probes = _probes(config, llm, providers, refresher, libraries)
    transports: list[Transport] = []
    if mqtt:
        transports.append(_bridge(config, store, bus, commands, probes, supervisor, watch, telegram))
    if telegram is not None:
        transports.append(telegram)
    return App(config, store, bus, client, recognizer, layouter, refresher, worker, commands,
               transports=tuple(transports), jellyfin=confirmer, closers=closers, supervisor=supervisor,
               watch=watch)


def _confirmer(config: Config, store: Store, bus: EventBus) -> Any:
    """The Jellyfin confirmation (None when Jellyfin or the confirmation is off)."""
    if not (config.jellyfin.enabled and config.jellyfin.confirm):
        return None
    from jellybit.adapters.jellyfin_library import JellyfinLibraries
    from jellybit.engine.jellyfin_confirm import JellyfinConfirmer

    return JellyfinConfirmer(store, bus, JellyfinLibraries(config.jellyfin, config.paths), config.jellyfin,
                             config.paths)


# ---------------------------------------------------------------- storage faults (core/storage.py)

def _storage_watch(config: Config, store: Store, bus: EventBus) -> StorageWatch:
    """The watch over the database's disk and the library roots, told by the store of its faults."""
    roots = {"movies": config.paths.movies, "series": config.paths.series}
    watch = StorageWatch(config.storage.database, roots, notify=partial(publish_storage_fault, bus))
    store.watch = watch
    watch.try_write = store.try_write
    return watch


def publish_storage_fault(bus: EventBus, component: str, fault: StorageFault | None) -> None:
    """A storage fault began (or, with None, ended): one `fault` event, and `info` refreshed."""
    if fault is None:
        bus.publish(Event(EventKind.FAULT, component, name=component, reason="recovered"))
        return
    bus.publish(Event(EventKind.FAULT, component, name=component, reason=fault.message,
                      data={"code": fault.code}))


def storage_components(supervisor: Supervisor,
                watch: StorageWatch | None) -> Callable[[], dict[str, ComponentHealth]]:
    """`info.components`: the supervised loops, then the database and each library root."""
    def merged() -> dict[str, ComponentHealth]:
        found = supervisor.status()
        for name, current in (watch.status() if watch is not None else {}).items():
            found[name] = ComponentHealth(
                name, running=True, error=current.message if current else None,
                failed_at=current.since if current else None, code=current.code if current else None)
        return found
    return merged


def _publish_fault(bus: EventBus, fault: Fault) -> None:
    """A component failed or recovered: a `fault` event (MQTT `events`, and `info` refreshed)."""
    bus.publish(Event(EventKind.FAULT, fault.component, name=fault.component,
                      reason=fault.error or "recovered"))


# glibc's mallopt(M_MMAP_THRESHOLD): buffers this large are mapped on their own and given back to
# the system when freed. By default glibc raises the threshold after the first large free, and
# an 8 MiB upload read afterwards lands in the heap, which keeps its high-water mark: twenty
# uploads left the worker 130 MiB larger for good (bench/bombs.py).
M_MMAP_THRESHOLD = -3
LARGE_BUFFER = 1 << 20


def _return_large_buffers() -> None:
    """Make glibc hand large freed buffers back to the system (nothing elsewhere: not glibc)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, LARGE_BUFFER)


async def run(config: Config, *, app: App | None = None) -> int:
    """Run until SIGTERM or SIGINT, then stop cleanly (in-flight transactions finish).

    Returns the exit status: 0 after a requested stop, 1 when a component could not be kept
    alive (so systemd or compose restart the process instead of seeing a clean exit).
    """
    _return_large_buffers()
    app = app or build_app(config)
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    status = 0
    try:
        try:
            await app.start()
        except StorageFault as exc:
            # A database that cannot be written at start: one line that says why, not a traceback.
            log.critical("cannot start: %s", exc.message,
                         extra={"code": exc.code, "component": exc.component})
            return 1
        stopper = asyncio.create_task(stopping.wait())
        crashed = asyncio.create_task(app.wait())
        done, _ = await asyncio.wait({stopper, crashed}, return_when=asyncio.FIRST_COMPLETED)
        for task in (stopper, crashed):
            if task not in done:
                task.cancel()
        await asyncio.gather(stopper, crashed, return_exceptions=True)
        if crashed in done:
            error = crashed.exception()
            log.critical("stopping with an error: %s", error,
                         exc_info=None if isinstance(error, GaveUp) else error)
            status = 1
        else:
            log.info("stop requested")
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await app.stop()
    return status
