"""A refused key is named as refused, with the setting to check, for each keyed service the worker
pings: Jellyfin (`/System/Info` answers 401), an OpenAI-compatible LLM (401 with OpenAI's
`{"error": {"code": "invalid_api_key"}}`), TVDB v4 (`/login` answers 401, or 400 for a subscriber key
sent without its PIN). Each fake speaks the service's own answers; the worker is wired by `build_app`
and its `info` read as MQTT publishes it, then said as `jellybit healthcheck` says it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jellybit.app import build_app
from jellybit.cli.health import Check, service_checks
from jellybit.config import JellyfinConfig, LlmConfig, MetadataConfig, TvmazeConfig
from jellybit.protocol import InfoPayload
from jellybit.transports.mqtt import MqttBridge
from tests.support.app_config import loopback_config
from tests.support.fake_jellyfin import FakeJellyfin
from tests.support.fake_metadata import FakeTvdb
from tests.support.fake_openai import FakeOpenAI
from tests.support.services import free_port

LLM_KEY = "sk-proj-right-key-0123456789abcdef"
WRONG = "wrong-key-0123456789abcdef"


async def health(root: Path, **sections: Any) -> dict[str, Check]:
    """The `info` of a worker with these sections, as it would publish it, said as `jellybit
    healthcheck` says it."""
    app = build_app(loopback_config(root, **sections))
    bridge = app.transport("mqtt")
    assert isinstance(bridge, MqttBridge)
    try:
        message = await bridge.state.info()
    finally:
        for close in app.closers:
            await close()
        await app.refresher.close()
        if app.jellyfin is not None:
            await app.jellyfin.lookup.close()
        await app.client.close()
    assert message.payload is not None
    return {check.name: check for check in service_checks(InfoPayload.model_validate_json(message.payload))}


def closed() -> str:
    return f"http://127.0.0.1:{free_port()}"


async def test_jellyfin_ok_refused_unreachable(tmp_path: Path, fake_jellyfin: FakeJellyfin) -> None:
    ok = (await health(tmp_path, jellyfin=fake_jellyfin.config(confirm=False)))["jellyfin"]
    assert (ok.ok, ok.state) == (True, "ok")

    refused = (await health(tmp_path, jellyfin=fake_jellyfin.config(api_key=WRONG, confirm=False)))[
        "jellyfin"]
    assert (refused.ok, refused.state) == (False, "refused")
    assert "HTTP 401" in refused.detail
    assert "JELLYBIT_JELLYFIN_API_KEY" in str(refused.hint)
    assert "Dashboard → API Keys" in str(refused.hint)
    asked = [r for r in fake_jellyfin.calls("/System/Info") if r.headers.get("x-emby-token") == WRONG
             or WRONG in r.headers.get("authorization", "")]
    assert asked, "the key was sent to /System/Info"

    down = JellyfinConfig(enabled=True, url=closed(), api_key=WRONG, confirm=False)
    unreachable = (await health(tmp_path, jellyfin=down))["jellyfin"]
    assert (unreachable.ok, unreachable.state) == (False, "unreachable")
    assert "start Jellyfin or fix jellyfin.url" in str(unreachable.hint)
    for check in (ok, refused, unreachable):
        assert WRONG not in check.detail + str(check.hint)


async def test_llm_ok_refused_unreachable(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.api_key = LLM_KEY
    fake_openai.models = ["test-model"]

    def llm(url: str, key: str) -> LlmConfig:
        return LlmConfig(enabled=True, base_url=url, api_key=key, model="test-model")

    ok = (await health(tmp_path, llm=llm(fake_openai.base_url, LLM_KEY)))["llm"]
    assert (ok.ok, ok.state) == (True, "ok")
    assert "model test-model available" in ok.detail

    refused = (await health(tmp_path, llm=llm(fake_openai.base_url, WRONG)))["llm"]
    assert (refused.ok, refused.state) == (False, "refused")
    assert "refused the API key (HTTP 401)" in refused.detail
    assert "JELLYBIT_LLM_API_KEY" in str(refused.hint)

    unreachable = (await health(tmp_path, llm=llm(f"{closed()}/v1", LLM_KEY)))["llm"]
    assert (unreachable.ok, unreachable.state) == (False, "unreachable")
    assert "start the LLM server at llm.base_url" in str(unreachable.hint)
    for check in (ok, refused, unreachable):
        assert WRONG not in check.detail + str(check.hint)
        assert LLM_KEY not in check.detail + str(check.hint)


def tvdb_metadata(fake: FakeTvdb, **overrides: Any) -> MetadataConfig:
    return MetadataConfig(tvdb=fake.config(**overrides), tvmaze=TvmazeConfig(enabled=False))


async def test_tvdb_ok_refused_unreachable(tmp_path: Path, fake_tvdb: FakeTvdb) -> None:
    ok = (await health(tmp_path, metadata=tvdb_metadata(fake_tvdb)))["metadata.tvdb"]
    assert (ok.ok, ok.state) == (True, "ok")

    refused = (await health(tmp_path, metadata=tvdb_metadata(fake_tvdb, api_key=WRONG)))[
        "metadata.tvdb"]
    assert (refused.ok, refused.state) == (False, "refused")
    assert "HTTP 401" in refused.detail
    assert "InvalidAPIKey" in refused.detail                  # TVDB's own reason, passed on
    assert "JELLYBIT_METADATA_TVDB_API_KEY" in str(refused.hint)

    down = tvdb_metadata(fake_tvdb, base_url=f"{closed()}/v4")
    unreachable = (await health(tmp_path, metadata=down))[
        "metadata.tvdb"]
    assert (unreachable.ok, unreachable.state) == (False, "unreachable")
    assert "check this machine's network" in str(unreachable.hint)
    for check in (ok, refused, unreachable):
        assert WRONG not in check.detail + str(check.hint)


@pytest.mark.parametrize("pin", [None, "wrong-pin-q9z"])
async def test_a_tvdb_subscriber_key_without_its_right_pin_is_refused(tmp_path: Path, fake_tvdb: FakeTvdb,
                                                                      pin: str | None) -> None:
    """TVDB answers a subscriber key sent without its PIN with 400 "pin required": a credential to
    fix, not a network to check."""
    fake_tvdb.require_pin = True
    check = (await health(tmp_path, metadata=tvdb_metadata(fake_tvdb, pin=pin)))["metadata.tvdb"]
    assert (check.ok, check.state) == (False, "refused")
    assert "pin" in str(check.hint)
    if pin is None:
        assert "pin required" in check.detail
    assert "wrong-pin-q9z" not in check.detail + str(check.hint)
