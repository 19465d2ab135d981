"""Parsing off the event loop: a large .torrent is read in a child process while the loop keeps
running; a call over its budget is killed; past the slots and the waiting line the answer is busy."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import bencode2
import pytest

from jellybit.adapters.offload import Offloader, OverBudget, offloaded_parser
from jellybit.core.identity import parse_torrent
from jellybit.errors import Busy, InvalidSource


def pack(files: int) -> bytes:
    """A valid multi-file .torrent with many episodes (about 75 bytes per file)."""
    entries = [{b"length": 1000, b"path": [b"Season %02d" % (i // 1000), b"Show.S01E%05d.1080p.mkv" % i]}
               for i in range(files)]
    piece = 65536
    pieces = b"\0" * 20 * -(-1000 * files // piece)
    info = {b"name": "Большой.Пак".encode(), b"piece length": piece, b"files": entries, b"pieces": pieces}
    # Trackerless: ingest checks where trackers point, and tests resolve no name beyond loopback.
    return bencode2.bencode({b"info": info})


def sleeper(marker: str, seconds: float) -> str:
    """Runs in the child: says who it is, then overstays."""
    Path(marker).write_text(str(os.getpid()))
    time.sleep(seconds)
    return "finished"


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state == "Z"


async def test_a_large_torrent_is_read_while_the_event_loop_keeps_running() -> None:
    data = pack(20_000)
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            await asyncio.sleep(0.01)
            ticks += 1

    parse = offloaded_parser(Offloader(timeout=120))
    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    before = ticks
    meta = await parse(data, 20_000_000)
    during = ticks - before
    stop.set()
    await task
    assert meta == parse_torrent(data, 20_000_000)        # the same answer as in-process
    assert len(meta.files) == 20_000
    # On the loop the ticker could not have run at all while the file was read.
    assert during >= 5


async def test_domain_errors_come_back_as_they_are() -> None:
    parse = offloaded_parser(Offloader(timeout=30))
    with pytest.raises(InvalidSource, match="damaged or cut short"):
        await parse(pack(10)[:-40], 1_000_000)
    with pytest.raises(InvalidSource, match="larger than"):
        await parse(pack(10), 100)


async def test_a_call_over_its_budget_is_killed(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    offloader = Offloader(timeout=5.0)         # room to import this module in the child first
    with pytest.raises(OverBudget):
        await offloader.call(sleeper, str(marker), 60.0)
    pid = int(marker.read_text())
    deadline = time.monotonic() + 10
    while not gone(pid):
        assert time.monotonic() < deadline, "the child outlived its budget"
        await asyncio.sleep(0.05)


async def test_over_budget_parse_is_an_invalid_source_for_the_user() -> None:
    parse = offloaded_parser(Offloader(timeout=0.001))
    with pytest.raises(InvalidSource, match="could not be read in time"):
        await parse(pack(20_000), 20_000_000)


async def test_past_the_slots_and_the_line_the_caller_is_told_busy(tmp_path: Path) -> None:
    offloader = Offloader(slots=1, waiting=1, timeout=30)
    first = asyncio.create_task(offloader.call(sleeper, str(tmp_path / "a"), 1.0))
    await asyncio.sleep(0.1)
    second = asyncio.create_task(offloader.call(sleeper, str(tmp_path / "b"), 0.0))
    await asyncio.sleep(0.05)
    with pytest.raises(Busy):
        await offloader.call(sleeper, str(tmp_path / "c"), 0.0)
    assert await first == "finished"
    assert await second == "finished"
    assert not (tmp_path / "c").exists()


def bomb(containers: int) -> bytes:
    """A valid torrent plus a key holding `containers` empty lists: 2 bytes each in the file, about
    64 in memory once decoded (a bencode bomb)."""
    info = {b"name": b"Bomb", b"piece length": 65536, b"length": 1000, b"pieces": b"\0" * 20}
    return bencode2.bencode({b"info": info})[:-1] + b"2:zzl" + b"le" * containers + b"ee"


async def test_a_bencode_bomb_hits_the_memory_budget_and_is_refused_in_words() -> None:
    data = bomb(1_500_000)                                 # 3 MB on disk, about 100 MiB decoded
    parse = offloaded_parser(Offloader(timeout=120, memory=32 * 1024 * 1024))
    with pytest.raises(InvalidSource, match="needs more than 32 MiB of memory"):
        await parse(data, 10_000_000)
    # The same budget reads a real 20,000-file torrent (about 2 MB), and the next call works.
    assert len((await parse(pack(20_000), 20_000_000)).files) == 20_000
