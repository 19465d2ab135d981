"""CPU-heavy work off the event loop: each call in a short-lived child process, with a time budget.

Reading a large `.torrent` is pure Python and takes seconds; on the event loop it stalled every
other request and the qBittorrent poll. Here each call runs in a child forked from a small
`forkserver` that has the parser preloaded (a few milliseconds to start), so the worker's loop
and memory are untouched; at most `slots` children run at once, a few more calls may wait for a
slot, and past that the caller is told the worker is busy. A child that overruns its time budget
is killed; one that needs more memory than its budget (`RLIMIT_AS`, address space beyond what it
held at its start) fails with MemoryError and says so — a bencode bomb (a small file that decodes
into millions of objects) costs at most that much. The function and its arguments and result must
be picklable (a module-level function).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import resource
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from jellybit.core.identity import TorrentMeta, parse_torrent
from jellybit.errors import Busy, InvalidSource, JellybitError

log = logging.getLogger(__name__)

T = TypeVar("T")
PRELOAD = ["jellybit.core.identity"]
_context: Any = None


class OverBudget(Exception):
    """The call ran past its time budget and its process was killed."""


class OverMemory(Exception):
    """The call needed more memory than its budget (the child's allocation failed)."""


class ChildFailed(Exception):
    """The child process ended without an answer (killed, out of memory) or raised something odd."""


def _mp_context() -> Any:
    global _context
    if _context is None:
        # forkserver: children never inherit the worker's threads (aiosqlite) or sockets.
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(PRELOAD)
    return _context


def _limit_memory(budget: int | None) -> None:
    """Cap this process's address space at what it holds now plus `budget` bytes."""
    if budget is None:
        return
    with open("/proc/self/statm", encoding="ascii") as statm:
        size = int(statm.read().split()[0]) * resource.getpagesize()
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = size + budget
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _child(conn: Connection, func: Callable[..., Any], args: tuple[Any, ...],
           memory: int | None = None) -> None:
    _limit_memory(memory)
    try:
        result: tuple[str, Any] = ("ok", func(*args))
    except MemoryError:
        # Nothing is built here: the memory comes back once this block has dropped the traceback.
        result = ("memory", None)
    except JellybitError as exc:
        result = ("error", exc)
    except BaseException as exc:  # reported to the parent, which decides
        result = ("crash", f"{type(exc).__name__}: {exc}")
    try:
        conn.send(result)
    except Exception as exc:  # an unpicklable result
        conn.send(("crash", f"cannot send the result back: {exc}"))
    finally:
        conn.close()


class Offloader:
    """Runs a picklable function in a child process: bounded slots, a bounded wait, a time budget."""

    def __init__(self, *, slots: int = 2, waiting: int = 4, timeout: float = 10.0,
                 memory: int | None = None) -> None:
        self.slots = max(1, slots)
        self.waiting = max(0, waiting)
        self.timeout = timeout
        self.memory = memory
        self._semaphore = asyncio.Semaphore(self.slots)
        self._queued = 0

    async def call(self, func: Callable[..., T], *args: Any) -> T:
        """`func(*args)` in a child; raises its domain error, or Busy, OverBudget, ChildFailed."""
        if self._semaphore.locked() and self._queued >= self.waiting:
            raise Busy("the worker is reading other .torrent files right now; try again in a moment")
        self._queued += 1
        try:
            await self._semaphore.acquire()
        finally:
            self._queued -= 1
        try:
            return await self._run(func, args)
        finally:
            self._semaphore.release()

    async def _run(self, func: Callable[..., T], args: tuple[Any, ...]) -> T:
        context = _mp_context()
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_child, args=(sender, func, args, self.memory), daemon=True)
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, process.start)    # pickling 10 MB is not free either
            sender.close()
            readable = loop.create_future()
            loop.add_reader(receiver.fileno(), _resolve, readable)
            try:
                await asyncio.wait_for(readable, self.timeout)
            except TimeoutError:
                raise OverBudget(f"took longer than {self.timeout:g} s") from None
            finally:
                loop.remove_reader(receiver.fileno())
            try:
                kind, value = await loop.run_in_executor(None, receiver.recv)
            except (EOFError, OSError):
                raise ChildFailed(_ended(process)) from None
        finally:
            receiver.close()
            if process.pid is not None:
                if process.is_alive():
                    process.kill()
                await loop.run_in_executor(None, process.join, 5)
                if not process.is_alive():
                    process.close()
        if kind == "ok":
            return value  # type: ignore[no-any-return]
        if kind == "error":
            raise value
        if kind == "memory":
            raise OverMemory(f"needs more than {_mib(self.memory)} of memory")
        raise ChildFailed(str(value))


def _mib(size: int | None) -> str:
    return "its" if size is None else f"{size / 1048576:g} MiB"


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _ended(process: Any) -> str:
    process.join(1)
    code = process.exitcode
    if code is not None and code < 0:
        return f"the parser process was killed (signal {-code})"
    return f"the parser process ended without an answer (exit status {code})"


def offloaded_parser(offloader: Offloader) -> Callable[[bytes, int], Awaitable[TorrentMeta]]:
    """Parse in a child process within the offloader's time budget (the worker's event loop stays free)."""
    async def parse(data: bytes, max_bytes: int) -> TorrentMeta:
        if not isinstance(data, bytes) or len(data) > max_bytes or data[:1] != b"d":
            return parse_torrent(data, max_bytes)          # refused at once; no process needed
        try:
            return await offloader.call(parse_torrent, data, max_bytes)
        except OverBudget as exc:
            raise InvalidSource(f"the .torrent could not be read in time ({exc}); it is unusually "
                                "large or complex") from None
        except OverMemory as exc:
            raise InvalidSource(f"the .torrent could not be read: it {exc} (its structure is unusually "
                                "large: a file this size normally needs a fraction of that, so it is "
                                "damaged or built to exhaust memory)") from None
        except ChildFailed as exc:
            raise InvalidSource(f"the .torrent could not be read: {exc}") from None
    return parse
