"""JellyfinRefresher against a local fake Jellyfin (and against nothing at all)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import pytest

from jellybit.adapters.jellyfin import JellyfinRefresher
from jellybit.config import JellyfinConfig
from jellybit.errors import ConfigError
from tests.support.fake_metadata import FakeJellyfin
from tests.support.services import free_port

FAST_RETRIES = (0.01, 0.01, 0.01)


async def wait_for(condition: Callable[[], bool], deadline: float = 5.0) -> None:
    """Poll until condition holds (fails the test after the deadline)."""
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, "condition not reached in time"
        await asyncio.sleep(0.01)


def warnings_from(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Warning-or-worse messages of the Jellyfin adapter."""
    return [r.getMessage() for r in caplog.records
            if r.name == "jellybit.adapters.jellyfin" and r.levelno >= logging.WARNING]


async def test_a_burst_becomes_one_refresh_with_the_token(fake_jellyfin: FakeJellyfin) -> None:
    refresher = JellyfinRefresher(fake_jellyfin.config(debounce_seconds=0.2))
    for n in range(10):
        assert refresher.request_refresh(f"download {n}") is None
    await wait_for(lambda: fake_jellyfin.refreshes == 1)
    await refresher.close()                 # lets a POST in flight finish; sends nothing more
    (call,) = fake_jellyfin.calls("/Library/Refresh")
    assert call.method == "POST"
    assert call.headers["x-emby-token"] == FakeJellyfin.API_KEY
    assert call.headers["authorization"] == f'MediaBrowser Token="{FakeJellyfin.API_KEY}"'
    assert refresher.sent == 1


async def test_separate_bursts_give_separate_refreshes(fake_jellyfin: FakeJellyfin) -> None:
    refresher = JellyfinRefresher(fake_jellyfin.config(debounce_seconds=0.02))
    try:
        refresher.request_refresh()
        await wait_for(lambda: fake_jellyfin.refreshes == 1)
        refresher.request_refresh()
        refresher.request_refresh()
        await wait_for(lambda: fake_jellyfin.refreshes == 2)
    finally:
        await refresher.close()
    assert fake_jellyfin.refreshes == 2


async def test_close_flushes_an_owed_refresh(fake_jellyfin: FakeJellyfin) -> None:
    refresher = JellyfinRefresher(fake_jellyfin.config(debounce_seconds=3600))
    refresher.request_refresh()
    await refresher.close()
    assert fake_jellyfin.refreshes == 1
    refresher.request_refresh()             # after close: ignored
    await asyncio.sleep(0.05)
    assert fake_jellyfin.refreshes == 1


async def test_a_down_jellyfin_raises_nothing_and_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    config = JellyfinConfig(enabled=True, url=f"http://127.0.0.1:{free_port()}", api_key="k",
                            debounce_seconds=0.01, timeout=1)
    refresher = JellyfinRefresher(config, retry_delays=FAST_RETRIES)
    for _ in range(5):
        refresher.request_refresh()
    await wait_for(lambda: not refresher.available)
    await asyncio.sleep(0.1)                # the retries run and fail too
    refresher.request_refresh()
    await refresher.close()
    assert len(warnings_from(caplog)) == 1
    assert "unreachable" in warnings_from(caplog)[0]
    assert refresher.sent == 0


async def test_failure_then_recovery_are_each_logged_once(
    fake_jellyfin: FakeJellyfin, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="jellybit.adapters.jellyfin")
    fake_jellyfin.script(503, times=2, path="/Library/Refresh")
    refresher = JellyfinRefresher(fake_jellyfin.config(debounce_seconds=0.01), retry_delays=FAST_RETRIES)
    refresher.request_refresh()
    await wait_for(lambda: refresher.sent == 1)
    await refresher.close()
    messages = [r.getMessage() for r in caplog.records if r.name == "jellybit.adapters.jellyfin"]
    assert messages == ["jellyfin library refresh failed: HTTP 503",
                        "jellyfin is reachable again; library refresh sent"]
    assert len(fake_jellyfin.calls("/Library/Refresh")) == 3
    assert refresher.available


async def test_a_rejected_key_is_reported_without_the_key(
    fake_jellyfin: FakeJellyfin, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    refresher = JellyfinRefresher(fake_jellyfin.config(api_key="wrong-key-123", debounce_seconds=0.01),
                                  retry_delays=())
    refresher.request_refresh()
    await wait_for(lambda: not refresher.available)
    await refresher.close()
    assert warnings_from(caplog) == ["jellyfin library refresh failed: the API key was rejected (HTTP 401)"]
    assert "wrong-key-123" not in caplog.text
    assert fake_jellyfin.refreshes == 0


def test_request_outside_an_event_loop_does_not_raise(fake_jellyfin: FakeJellyfin) -> None:
    refresher = JellyfinRefresher(fake_jellyfin.config())
    refresher.request_refresh()
    assert fake_jellyfin.requests == []


async def test_disabled_jellyfin_does_nothing(fake_jellyfin: FakeJellyfin) -> None:
    refresher = JellyfinRefresher(fake_jellyfin.config(enabled=False))
    refresher.request_refresh()
    status = await refresher.ping()
    await refresher.close()
    assert (status.enabled, status.ok, status.message) == (False, False, "disabled")
    assert fake_jellyfin.requests == []


async def test_ping_reports_version_and_outages(fake_jellyfin: FakeJellyfin) -> None:
    up = JellyfinRefresher(fake_jellyfin.config())
    down = JellyfinRefresher(JellyfinConfig(enabled=True, url=f"http://127.0.0.1:{free_port()}", api_key="k"))
    try:
        good, bad = await up.ping(), await down.ping()
    finally:
        await up.close()
        await down.close()
    assert (good.ok, good.version) == (True, "10.10.7")
    assert not bad.ok
    assert "unreachable" in bad.message


def test_enabled_without_a_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="JELLYBIT_JELLYFIN_API_KEY"):
        JellyfinRefresher(JellyfinConfig(enabled=True))
