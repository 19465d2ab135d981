"""`App` holds its transports behind one interface (`transports/base.py`): a name, loops handed to
the supervisor, a goodbye. Which ones run is decided once in `build_app`; start and stop treat them
alike, so a new transport is one class and one line there."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from jellybit.app import build_app
from jellybit.config import TelegramConfig
from jellybit.transports.base import Supervise, Transport
from jellybit.transports.mqtt import MqttBridge
from jellybit.transports.telegram.transport import TelegramTransport
from tests.support.app_config import loopback_config
from tests.support.services import free_port


def test_build_app_decides_which_transports_run(tmp_path: Path) -> None:
    """MQTT unless asked not to, Telegram when enabled; each one a Transport, found by its name."""
    app = build_app(loopback_config(tmp_path))
    assert [t.name for t in app.transports] == ["mqtt"]
    assert isinstance(app.transport("mqtt"), MqttBridge)
    assert app.transport("telegram") is None

    telegram = TelegramConfig(enabled=True, token="123456:test-token", allowed_user_ids=[1],
                              base_url=f"http://127.0.0.1:{free_port()}")
    app = build_app(loopback_config(tmp_path, telegram=telegram))
    assert [t.name for t in app.transports] == ["mqtt", "telegram"]
    assert all(isinstance(t, Transport) for t in app.transports)
    assert isinstance(app.transport("telegram"), TelegramTransport)

    assert build_app(loopback_config(tmp_path), mqtt=False).transports == ()


class Recorder:
    """A transport of the test's own: one loop that runs until cancelled, and a goodbye it notes."""

    name = "recorder"

    def __init__(self) -> None:
        self.events: list[str] = []
        self.running = asyncio.Event()

    def start(self, supervise: Supervise) -> None:
        supervise("recorder-loop", self.loop)

    async def loop(self) -> None:
        self.events.append("loop started")
        self.running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.events.append("loop cancelled")
            raise

    async def stop(self) -> None:
        self.events.append("stop")


async def test_start_supervises_a_transports_loops_and_stop_says_goodbye_first(tmp_path: Path) -> None:
    """The app starts any Transport's loops under the supervisor (so `info.components` lists them) and
    on stop calls its `stop` before cancelling them; nothing in `App` names the transport."""
    app = build_app(loopback_config(tmp_path), mqtt=False)
    recorder = Recorder()
    app.transports = (recorder,)
    assert isinstance(recorder, Transport)
    await app.start()
    try:
        await asyncio.wait_for(recorder.running.wait(), 10)
        assert app.supervisor.status()["recorder-loop"].running
        assert app.transport("recorder") is recorder
    finally:
        await app.stop()
    assert recorder.events == ["loop started", "stop", "loop cancelled"]
    task = app.supervisor.task("recorder-loop")
    assert task is None or task.done()


async def test_the_telegram_transport_supervises_its_one_loop_under_its_name(tmp_path: Path) -> None:
    """Telegram is a Transport by itself: `start` hands exactly its `run` to the supervisor, named
    `telegram`; its `stop` has nothing to say (cancelling `run` closes the bot)."""
    telegram = TelegramConfig(enabled=True, token="123456:test-token", allowed_user_ids=[1],
                              base_url=f"http://127.0.0.1:{free_port()}")
    transport = build_app(loopback_config(tmp_path, telegram=telegram), mqtt=False).transport("telegram")
    assert isinstance(transport, TelegramTransport)
    handed: list[tuple[str, object]] = []
    transport.start(lambda name, loop: handed.append((name, loop)))
    assert handed == [("telegram", transport.run)]
    await transport.stop()
    await transport.close()


def _transport_imports(path: Path) -> set[str]:
    """The transports a file imports (`jellybit.transports.mqtt.bridge` → `mqtt`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["jellybit", "transports"] and len(parts) > 2:
                found.add(parts[2].split("_")[0])
    return found


def test_one_transport_never_imports_another() -> None:
    """MQTT's files import nothing of Telegram's and the reverse: each sits on the engine and the
    shared presentation (`payloads`, `service_health`, `base`), so either can go without the other."""
    transports = Path(__file__).resolve().parents[1] / "jellybit" / "transports"
    for path in sorted(transports.rglob("*.py")):
        kind = path.relative_to(transports).parts[0].removesuffix(".py").split("_")[0]
        if kind in {"mqtt", "telegram"}:
            other = {"mqtt", "telegram"} - {kind}
            assert not _transport_imports(path) & other, path
