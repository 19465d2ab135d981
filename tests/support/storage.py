"""Storage faults made for real: small tmpfs mounts filled up, remounted read-only or unmounted, and a
watcher of the worker's `events` and `info` topics. Mounting needs root: CI runs as root, and there a
mount that fails fails the test (`unavailable`) instead of skipping it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jellybit.client import JellybitClient
from jellybit.config import MqttConfig
from jellybit.protocol import Topics
from tests.support.services import unavailable


def mount_tmpfs(target: Path, size_kib: int) -> None:
    """Mount a tmpfs of `size_kib` at `target` (made if missing)."""
    target.mkdir(parents=True, exist_ok=True)
    _mount(["-t", "tmpfs", "-o", f"size={size_kib}k,mode=0755", "tmpfs", str(target)],
           f"cannot mount a {size_kib} KiB tmpfs at {target}")


def remount(target: Path, options: str) -> None:
    """Remount `target` with `options` (`ro`, `rw`)."""
    _mount(["-o", f"remount,{options}", str(target)], f"cannot remount {target} {options}")


def unmount(target: Path) -> None:
    """Unmount `target` (lazily: a worker's open descriptors do not keep it busy)."""
    subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


def _mount(args: list[str], what: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        unavailable(f"{what} (it needs root and CAP_SYS_ADMIN): {done.stderr.strip() or done.returncode}")


@contextlib.contextmanager
def tmpfs(target: Path, size_kib: int) -> Iterator[Path]:
    """A tmpfs at `target` for the block, unmounted after it whatever happened."""
    mount_tmpfs(target, size_kib)
    try:
        yield target
    finally:
        unmount(target)


def fill(folder: Path) -> Path:
    """Write a file in `folder` until its filesystem is full; the file, to delete for room again."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for size in (1 << 16, 512, 1):       # big blocks, then the last bytes a block did not fit into
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError:
                    break
    finally:
        os.close(fd)
    return filler


class BusWatch:
    """Every `fault` event on `<base>/events` and the latest `<base>/info`, as the worker publishes them."""

    def __init__(self, mqtt: MqttConfig) -> None:
        self.mqtt = mqtt
        self.topics = Topics(mqtt.base_topic)
        self.events: list[dict[str, Any]] = []
        self.info: dict[str, Any] = {}
        self._task: asyncio.Task[None] | None = None
        self._client: JellybitClient | None = None

    async def __aenter__(self) -> BusWatch:
        self._client = await JellybitClient(self.mqtt, name="storage-watch").__aenter__()
        ready = asyncio.Event()
        self._task = asyncio.create_task(self._read(ready))
        await asyncio.wait_for(ready.wait(), 10)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._client is not None:
            await self._client.__aexit__(None, None, None)

    async def _read(self, ready: asyncio.Event) -> None:
        assert self._client is not None
        # Subscribed once the retained `info` arrives (the worker is online before a watch starts).
        async for topic, payload, _retained in self._client.watch(self.topics.events, self.topics.info):
            if not payload:
                continue
            data = json.loads(payload)
            if topic == self.topics.info:
                self.info = data
                ready.set()
            elif data.get("event_type") == "fault":
                self.events.append(data)

    def faults(self, component: str) -> list[dict[str, Any]]:
        """The `fault` events about one component, in order."""
        return [e for e in self.events if e.get("id") == component]

    def component(self, name: str) -> dict[str, Any]:
        """The component as the latest `info` shows it."""
        return (self.info.get("components") or {}).get(name) or {}
