"""Root fixtures: each tests/support module registers its fixtures here."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import settings

from jellybit.adapters.store import Store

# Property tests: no per-example deadline anywhere (a timing assertion on a shared, noisy
# machine), and in CI a fixed derandomized search so a run is repeatable; on a developer's
# machine each run explores new examples and keeps the failures it finds in .hypothesis/.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))

pytest_plugins = [
    "tests.support.network_guard",
    "tests.support.mosquitto",
    "tests.support.homeassistant",
    "tests.support.fake_metadata",
    "tests.support.providers",
    "tests.support.fake_openai",
    "tests.support.qbittorrent",
    "tests.support.qbittorrent_pair",
    "tests.support.media",
    "tests.support.engine",
    "tests.support.bridge",
    "tests.support.decisions",
    "tests.support.fake_telegram",
    "tests.support.telegram_bot",
    "tests.support.worker_process",
]


@pytest.fixture
async def store(tmp_path: Path):
    """A migrated store in a real SQLite file."""
    s = Store(tmp_path / "jellybit.db")
    await s.open()
    try:
        yield s
    finally:
        await s.close()


# ------------------------------------------------------------ leaked threads
#
# A non-daemon thread that outlives the session (an aiosqlite connection a failing test never
# closed, say) keeps the interpreter from exiting after the summary is printed: CI would wait
# for its time limit instead of reporting. Give such threads a moment, then name them and exit.

_THREAD_GRACE_S = 5.0
_exit_status = 0


def _lingering_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()
            and not t.name.startswith(("ThreadPoolExecutor", "asyncio_"))]   # joined at exit by Python


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _exit_status
    _exit_status = int(exitstatus)


def pytest_unconfigure(config: pytest.Config) -> None:
    lingering = _lingering_threads()
    for thread in lingering:
        thread.join(_THREAD_GRACE_S / max(len(lingering), 1))
    lingering = [t for t in lingering if t.is_alive()]
    if not lingering:
        return
    names = ", ".join(t.name for t in lingering)
    sys.stderr.write(f"\nerror: {len(lingering)} non-daemon thread(s) outlived the test session "
                     f"(a resource a test never closed): {names}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(_exit_status or 3)
