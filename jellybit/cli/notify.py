"""`jellybit notify [HASH]` on a fast path: qBittorrent runs it for every finished torrent.

The whole CLI imports the pydantic configuration, the protocol models and aiomqtt before it
does anything (about half a second); a completion hook only has to say "poll now". So a plain
`[--config FILE] notify [HASH]` reads just the `[mqtt]` table of the TOML file (with the same
file lookup and environment overrides as the CLI), publishes one QoS 1 request with paho and
returns once the broker has it. It does not wait for the worker's answer: a worker that is
down misses the poke and finds the torrent by polling. Anything else on the command line, or a
config this reader cannot take at face value, goes to the full CLI, which explains the problem.

Only the standard library and paho are imported here; `jellybit.protocol` would cost the time
this module saves, so the one topic it needs is spelled here and a test holds it equal to
`Topics.request(Command.NOTIFY)`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import ssl
import sys
import time
import tomllib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

CONFIG_ENV = "JELLYBIT_CONFIG"                          # as jellybit.config
LOCAL_DIR_ENV = "JELLYBIT_LOCAL_DIR"                    # as jellybit.cli.local
LOCAL_CONFIG = Path("var") / "local" / "jellybit.toml"
ACCOUNT_ENV = {"JELLYBIT_MQTT_USERNAME": "username", "JELLYBIT_MQTT_PASSWORD": "password"}
EXIT_OK = 0
EXIT_NO_ANSWER = 4
TIMEOUT = 10.0
_HASH = re.compile(r"^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")


@dataclass(frozen=True)
class BrokerSettings:
    """The part of `[mqtt]` a notify needs."""

    url: str = "mqtt://127.0.0.1:1883"
    username: str | None = None
    password: str | None = None
    base_topic: str = "jellybit"
    keepalive: int = 30
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure: bool = False

    @property
    def topic(self) -> str:
        """Where the worker reads notify requests (`Topics(base).request("notify")`)."""
        return f"{self.base_topic}/request/notify"


def notify_arguments(argv: Sequence[str]) -> tuple[str | None, str | None] | None:
    """(config file, hash) for a plain `[--config FILE] notify [HASH]`; None for anything else."""
    args = list(argv)
    config: str | None = None
    if args and args[0].startswith("--config="):
        config = args.pop(0).split("=", 1)[1]
    elif len(args) >= 2 and args[0] == "--config":
        config = args[1]
        args = args[2:]
    if not args or args[0] != "notify" or len(args) > 2:
        return None
    torrent_hash = args[1] if len(args) == 2 else None
    if torrent_hash is not None and not _HASH.match(torrent_hash):
        return None
    return config, torrent_hash


def config_file(explicit: str | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The file the CLI would read: --config, JELLYBIT_CONFIG, else the local stack's own."""
    if explicit:
        return Path(explicit)
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV])
    found = [Path(env[LOCAL_DIR_ENV]) / "jellybit.toml"] if env.get(LOCAL_DIR_ENV) else []
    found.append(cwd / LOCAL_CONFIG)
    return next((path for path in found if path.is_file()), None)


def broker_settings(path: Path | None, env: Mapping[str, str]) -> BrokerSettings | None:
    """Read `[mqtt]`; None when the file or a value is not plainly usable (the full CLI then says why)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8")) if path is not None else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    mqtt = data.get("mqtt", {})
    tls = mqtt.get("tls", {}) if isinstance(mqtt, dict) else None
    if not isinstance(mqtt, dict) or not isinstance(tls, dict):
        return None
    values = {key: mqtt[key] for key in ("url", "username", "password", "base_topic", "keepalive")
              if key in mqtt}
    values |= {key: tls[key] for key in ("ca_file", "cert_file", "key_file", "insecure") if key in tls}
    for name, key in ACCOUNT_ENV.items():
        if env.get(name) is not None:
            values[key] = env[name]
    try:
        settings = BrokerSettings(**values)
    except TypeError:
        return None
    text_fields = (settings.url, settings.base_topic, settings.username or "", settings.password or "",
                   settings.ca_file or "", settings.cert_file or "", settings.key_file or "")
    if (not all(isinstance(v, str) for v in text_fields) or not isinstance(settings.insecure, bool)
            or isinstance(settings.keepalive, bool) or not isinstance(settings.keepalive, int)
            or settings.keepalive <= 0 or not settings.url.startswith(("mqtt://", "mqtts://"))):
        return None
    return settings


def publish(settings: BrokerSettings, torrent_hash: str | None, timeout: float = TIMEOUT) -> bool:
    """Publish one notify request with QoS 1; True once the broker acknowledged it."""
    # Imported here: a command line that goes to the full CLI should not pay for it.
    import paho.mqtt.client as mqtt

    url = urlsplit(settings.url)
    secure = url.scheme == "mqtts"
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                         client_id=f"jellybit-notify-{uuid.uuid4().hex[:12]}", protocol=mqtt.MQTTv5)
    if settings.username:
        client.username_pw_set(settings.username, settings.password)
    if secure:
        context = ssl.create_default_context(cafile=settings.ca_file or None)
        if settings.cert_file:
            context.load_cert_chain(settings.cert_file, settings.key_file or None)
        if settings.insecure:
            context.check_hostname = False
        client.tls_set_context(context)
        client.tls_insecure_set(settings.insecure)
    connected: list[bool] = []
    client.on_connect = lambda _c, _u, _f, reason, _p: connected.append(not reason.is_failure)
    deadline = time.monotonic() + timeout
    try:
        client.connect(url.hostname or "127.0.0.1", url.port or (8883 if secure else 1883),
                       keepalive=settings.keepalive)
        sock = client.socket()
        if isinstance(sock, socket.socket):   # Nagle would hold the PUBLISH behind the CONNECT's ACK
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while not connected and time.monotonic() < deadline:
            client.loop(timeout=0.05)
        if not connected or not connected[0]:
            return False
        body = json.dumps({"hash": torrent_hash} if torrent_hash else {})
        message = client.publish(settings.topic, body, qos=1)
        while not message.is_published() and time.monotonic() < deadline:
            client.loop(timeout=0.05)
        return message.is_published()
    except (OSError, ValueError):
        return False
    finally:
        client.disconnect()


def run(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | None = None) -> int | None:
    """Handle a plain `notify` and return its exit code; None hands the command line to the full CLI."""
    parsed = notify_arguments(argv)
    if parsed is None:
        return None
    env = os.environ if env is None else env
    settings = broker_settings(config_file(parsed[0], env, cwd or Path.cwd()), env)
    if settings is None:
        return None
    if publish(settings, parsed[1]):
        return EXIT_OK
    print(f"jellybit: notify: the broker at {settings.url} did not take the message; the worker finds "
          "the torrent at its next poll", file=sys.stderr)
    return EXIT_NO_ANSWER
