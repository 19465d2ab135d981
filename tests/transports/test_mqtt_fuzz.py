"""Fuzzing the request path: any payload on any command topic gets a well-formed answer.

Runs the bridge's real request handling over the real engine (built by `app.build_app`) and a
real SQLite file; qBittorrent points at a closed port, so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jellybit.app import build_app
from jellybit.config import (
    Config,
    MetadataConfig,
    PathsConfig,
    QbittorrentConfig,
    StorageConfig,
    TvmazeConfig,
)
from jellybit.protocol import Command, NotifyRequest, Response, parse_request
from tests.support.services import free_port

COMMANDS = [c.value for c in Command] + ["", "nope", "add/extra", "ädd"]
ID = "01jfzzzzzzzzzzzzzzzzzzzzzz"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
keys = st.sampled_from(["id", "source", "torrent", "context", "hint", "candidate_id", "overrides", "until",
                        "hours", "delete_data", "confirm", "provider", "provider_id", "states", "limit",
                        "offset", "text", "transaction", "reason", "hash"])
objects = st.dictionaries(keys, json_values | st.just(ID), max_size=5).map(
    lambda d: json.dumps(d).encode())
payloads = st.one_of(st.binary(max_size=300), objects, st.text(max_size=200).map(str.encode))


@given(command=st.sampled_from(list(Command)), payload=payloads)
def test_parse_request_only_raises_value_errors(command: Command, payload: bytes) -> None:
    try:
        parse_request(command, payload)
    except (ValueError, UnicodeDecodeError):
        pass


@given(text=st.text(max_size=80))
def test_a_bare_notify_payload_is_the_hash(text: str) -> None:
    bare = text.strip()
    if not bare or bare.startswith("{"):
        return
    try:
        request = parse_request(Command.NOTIFY, text.encode())
    except ValueError:
        assert len(bare) > 64                         # only a too-long "hash" is refused
        return
    assert isinstance(request, NotifyRequest)
    assert request.hash == bare                       # what `mosquitto_pub -m %I` sends


def _config(root: Path) -> Config:
    return Config(
        storage=StorageConfig(database=root / "jellybit.db"),
        qbittorrent=QbittorrentConfig(url=f"http://127.0.0.1:{free_port()}", timeout=1.0),
        paths=PathsConfig(downloads=root / "dl", movies=root / "movies", series=root / "series"),
        metadata=MetadataConfig(tvmaze=TvmazeConfig(enabled=False)),
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(st.tuples(st.sampled_from(COMMANDS), payloads), min_size=1, max_size=8))
def test_any_request_gets_a_well_formed_answer_and_bad_ones_change_nothing(
    batch: list[tuple[str, bytes]],
) -> None:
    async def scenario(root: Path) -> None:
        app = build_app(_config(root))
        await app.store.open()
        try:
            for name, payload in batch:
                before = await app.store.count_downloads()
                body = await app.bridge._respond(name, payload)
                response = Response.model_validate_json(body)
                if response.status == "error":
                    assert response.error is not None
                    assert response.error.code
                    assert response.error.message
                    assert response.error.code != "internal_error", response.error
                    assert await app.store.count_downloads() == before
                else:
                    assert name in {c.value for c in Command}
        finally:
            await app.client.close()
            await app.store.close()

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(scenario(Path(tmp)))
