"""The local development stack behind `scripts/run-local`: one folder holds everything.

`prepare` creates the folder (config, database, library folders, logs), writes the mosquitto and
qBittorrent configs (loopback only), stops what a crashed run left behind and checks the ports;
`wait` returns once the worker is healthy and prints where everything is. The bash script only
installs what is missing and supervises the processes. The config is generated once (with a
random qBittorrent password) and reused afterwards, edits included.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import re
import secrets
import shlex
import signal
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from devstack.broker import (
    CLI_ACCOUNT,
    HA_ACCOUNT,
    account_passwords,
    security_lines,
    upgrade_config,
    write_broker_files,
)
from devstack.metadata import Ask, metadata_keys, metadata_toml, terminal_ask, tvmaze_enabled
from jellybit.config import Config, load_config
from jellybit.errors import ConfigError

DIR_ENV = "JELLYBIT_LOCAL_DIR"
PORT_ENV = {
    "mqtt": "JELLYBIT_LOCAL_MQTT_PORT",
    "qbittorrent": "JELLYBIT_LOCAL_QBITTORRENT_PORT",
    "torrent": "JELLYBIT_LOCAL_TORRENT_PORT",
    "panel": "JELLYBIT_LOCAL_PANEL_PORT",
}
# Not the services' usual ports, so a system broker on 1883 or a qBittorrent on 8080 keeps working.
DEFAULT_PORTS = {"mqtt": 18830, "qbittorrent": 18080, "torrent": 18881, "panel": 18099}
SERVICES = ("panel", "worker", "qbittorrent", "mosquitto")       # in stop order
LOOPBACK = {"127.0.0.1", "localhost"}
STOP_TIMEOUT = 10.0


class StackError(Exception):
    """The stack cannot start; the message says why and what to do."""


# ---------------------------------------------------------------- the service configs


def qbt_password_hash(password: str, salt: bytes | None = None) -> str:
    """The `WebUI\\Password_PBKDF2` value qBittorrent 4.2+ stores (PBKDF2-HMAC-SHA512, 100000 rounds)."""
    salt = salt or os.urandom(16)
    key = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, 100_000, dklen=64)
    return f'"@ByteArray({base64.b64encode(salt).decode()}:{base64.b64encode(key).decode()})"'


def qbittorrent_conf(*, torrent_port: int, webui_port: int, save_path: Path, username: str,
                     password_hash: str, fast: bool = False) -> str:
    """A `qBittorrent.conf` that keeps qBittorrent on loopback (docs/testing.md §1 has the key names)."""
    # Every switch that would reach beyond loopback is off: DHT, LSD, PeX, UPnP/NAT-PMP, GeoIP;
    # the session is bound to `lo`.
    lines = [
        "[LegalNotice]", "Accepted=true", "",
        "[Meta]", "MigrationVersion=4", "",
        "[BitTorrent]",
        f"Session\\Port={torrent_port}",
        "Session\\Interface=lo",
        "Session\\InterfaceName=lo",
        "Session\\InterfaceAddress=127.0.0.1",
        "Session\\DHTEnabled=false",
        "Session\\LSDEnabled=false",
        "Session\\PeXEnabled=false",
        "Session\\AddTrackersEnabled=false",
        "Session\\QueueingSystemEnabled=false",
        f"Session\\DefaultSavePath={save_path}",
        "Session\\TempPathEnabled=false",
    ]
    if fast:
        # Tests: status refresh every 100 ms (default 1500), several hash checks at once.
        lines += ["Session\\RefreshInterval=100", "Session\\MaxActiveCheckingTorrents=8"]
    lines += [
        "",
        "[Network]", "PortForwardingEnabled=false", "",
        "[Preferences]",
        "Connection\\ResolvePeerCountries=false",
        "WebUI\\Enabled=true",
        "WebUI\\Address=127.0.0.1",
        f"WebUI\\Port={webui_port}",
        "WebUI\\UseUPnP=false",
        f"WebUI\\Username={username}",
        f"WebUI\\Password_PBKDF2={password_hash}",
        "WebUI\\LocalHostAuth=true",
        "WebUI\\HostHeaderValidation=false",
        "WebUI\\CSRFProtection=false",
        "WebUI\\MaxAuthenticationFailCount=0",
        "General\\Locale=en",
        "",
    ]
    return "\n".join(lines)


def mosquitto_conf(port: int, *, log_dest: str = "none", security: str = "allow_anonymous true\n") -> str:
    """A mosquitto config: loopback only, no persistence, TCP_NODELAY (QoS 1 latency); anonymous
    unless `security` says otherwise (the local stack: `devstack.broker.security_lines`)."""
    return (
        "per_listener_settings false\n"
        f"listener {port} 127.0.0.1\n"
        f"{security}"
        "persistence false\n"
        "set_tcp_nodelay true\n"
        f"log_dest {log_dest}\n"
    )


# ---------------------------------------------------------------- the folder


@dataclass(frozen=True)
class StackPaths:
    """Where everything of one local stack lives (all under `root`)."""

    root: Path

    @property
    def config(self) -> Path:
        """The Jellybit config file (generated once, then reused)."""
        return self.root / "jellybit.toml"

    @property
    def database(self) -> Path:
        """The SQLite database."""
        return self.root / "jellybit.db"

    @property
    def media(self) -> Path:
        """Downloads and libraries, on one filesystem so hardlinks work."""
        return self.root / "media"

    @property
    def logs(self) -> Path:
        """One log file per service."""
        return self.root / "logs"

    @property
    def run(self) -> Path:
        """Pid files and the lock of the running script."""
        return self.root / "run"

    @property
    def home(self) -> Path:
        """HOME of every service, so nothing is written in the user's home."""
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        """TMPDIR of every service."""
        return self.root / "tmp"

    @property
    def mosquitto_conf(self) -> Path:
        """The broker config, rewritten on every start."""
        return self.root / "mosquitto" / "mosquitto.conf"

    @property
    def qbittorrent_profile(self) -> Path:
        """qBittorrent's `--profile` directory (config, resume data, its own log)."""
        return self.root / "qbittorrent"

    @property
    def qbittorrent_conf(self) -> Path:
        """qBittorrent's config file, rewritten on every start (it rewrites it on exit too)."""
        return self.qbittorrent_profile / "qBittorrent" / "config" / "qBittorrent.conf"

    def pid_file(self, service: str) -> Path:
        """The pid file of one service."""
        return self.run / f"{service}.pid"

    def folders(self) -> list[Path]:
        """Every folder the stack needs."""
        return [self.media / "downloads", self.media / "movies", self.media / "series", self.logs,
                self.run, self.home, self.tmp, self.mosquitto_conf.parent, self.qbittorrent_conf.parent]


def _toml(value: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes; TOML also wants DEL escaped.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def config_text(paths: StackPaths, ports: Mapping[str, int], password: str, metadata: str = "") -> str:
    """The generated Jellybit config of a local stack (`metadata`: its `[metadata.*]` sections)."""
    downloads = str(paths.media / "downloads")
    panel = f"http://127.0.0.1:{ports['panel']}"
    return f"""# Jellybit local stack (scripts/run-local). Generated once and reused: edit it freely
# (enable [llm], add metadata keys, see config.example.toml). Only loopback ports are used.

[qbittorrent]
url = "http://127.0.0.1:{ports['qbittorrent']}"
username = "admin"
password = {_toml(password)}
save_path = {_toml(downloads)}

[paths]
downloads = {_toml(downloads)}
movies = {_toml(str(paths.media / 'movies'))}
series = {_toml(str(paths.media / 'series'))}

[storage]
database = {_toml(str(paths.database))}

[mqtt]
url = "mqtt://127.0.0.1:{ports['mqtt']}"

{metadata}
[panel]
host = "127.0.0.1"
port = {ports['panel']}
base_url = "{panel}"

[log]
level = "INFO"
format = "json"
"""


def requested_ports(env: Mapping[str, str]) -> dict[str, int]:
    """Ports from JELLYBIT_LOCAL_*_PORT, defaults for the others."""
    ports: dict[str, int] = {}
    for name, var in PORT_ENV.items():
        raw = env.get(var, "").strip()
        try:
            ports[name] = int(raw) if raw else DEFAULT_PORTS[name]
        except ValueError:
            raise StackError(f"{var}={raw!r} is not a port number") from None
        if not 0 < ports[name] < 65536:
            raise StackError(f"{var}={raw} is not a port number")
    return ports


def _port_of(url: str, what: str, config: Path) -> int:
    parts = urlsplit(url)
    if parts.hostname not in LOOPBACK or parts.port is None:
        raise StackError(f"{what} in {config} must be a loopback URL with a port (it is {url!r}): "
                         "the local stack runs its own services on 127.0.0.1")
    return parts.port


def config_ports(config: Config, path: Path) -> dict[str, int]:
    """The broker, WebUI and panel ports a config uses (each must be on loopback)."""
    return {"mqtt": _port_of(config.mqtt.url, "mqtt.url", path),
            "qbittorrent": _port_of(config.qbittorrent.url, "qbittorrent.url", path),
            "panel": config.panel.port}


GENERATED_MARK = "# Jellybit local stack (scripts/run-local). Generated once"


def _move_ports(path: Path, ports: Mapping[str, int], current: Mapping[str, int]) -> list[str]:
    """Rewrite the broker, WebUI and panel ports of a config run-local wrote; the names changed."""
    text = path.read_text(encoding="utf-8")
    moved = []
    for name in ("mqtt", "qbittorrent", "panel"):
        old, new = current[name], ports[name]
        if old == new:
            continue
        text = text.replace(f"127.0.0.1:{old}\"", f"127.0.0.1:{new}\"")
        if name == "panel":
            text = re.sub(rf"(?m)^port = {old}$", f"port = {new}", text)
        moved.append(f"{name} {old} → {new}")
    if moved:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
    return moved


def ensure_config(paths: StackPaths, env: Mapping[str, str],
                  ask: Ask | None = None, *, panel: bool = True) -> tuple[Config, dict[str, int]]:
    """Write the config on the first run (metadata keys from `env`, else `ask`ed) once its ports are
    free; afterwards load it. A JELLYBIT_LOCAL_*_PORT that disagrees moves the port in a config
    run-local wrote, and is refused for one written by hand."""
    wanted = requested_ports(env)
    if not paths.config.exists():
        check_ports(wanted, panel=panel)        # before anything is written: a busy port is no trap
        metadata = metadata_toml(metadata_keys(env, ask), tvmaze=tvmaze_enabled(env))
        text = config_text(paths, wanted, secrets.token_urlsafe(18), metadata)
        fd = os.open(paths.config, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # it holds a password
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
    config = load_config(paths.config, env=dict(env))
    added = upgrade_config(paths.config, config)
    if added:
        print(f"run-local: added {', '.join(added)} to {paths.config} (the broker takes no anonymous "
              "clients, the panel needs a login)", file=sys.stderr)
        config = load_config(paths.config, env=dict(env))
    ports = {**config_ports(config, paths.config), "torrent": wanted["torrent"]}
    differ = [name for name in ("mqtt", "qbittorrent", "panel")
              if env.get(PORT_ENV[name]) and ports[name] != wanted[name]]
    if differ and paths.config.read_text(encoding="utf-8").startswith(GENERATED_MARK):
        moved = _move_ports(paths.config, {**ports, **{n: wanted[n] for n in differ}}, ports)
        variables = ", ".join(PORT_ENV[n] for n in differ)
        print(f"run-local: {', '.join(moved)} in {paths.config} (from {variables})", file=sys.stderr)
        config = load_config(paths.config, env=dict(env))
        ports = {**config_ports(config, paths.config), "torrent": wanted["torrent"]}
    elif differ:
        name = differ[0]
        raise StackError(f"{PORT_ENV[name]}={wanted[name]} but {paths.config} uses port {ports[name]}; "
                         "change the port in that file (or unset the variable)")
    if config.qbittorrent.password is None or not config.qbittorrent.password.get_secret_value():
        raise StackError(f"qbittorrent.password is missing in {paths.config}: the local qBittorrent "
                         "needs one")
    return config, ports


def write_service_configs(paths: StackPaths, config: Config, ports: Mapping[str, int]) -> dict[str, str]:
    """(Re)write the mosquitto and qBittorrent configs; both stay on loopback whatever was there.

    Returns the panel's broker account (the worker's is in the config file).
    """
    folder = paths.mosquitto_conf.parent
    panel_account = write_broker_files(folder, config)
    paths.mosquitto_conf.write_text(mosquitto_conf(ports["mqtt"], log_dest="stderr",
                                                   security=security_lines(folder)), encoding="utf-8")
    assert config.qbittorrent.password is not None
    downloads = paths.media / "downloads"
    text = qbittorrent_conf(torrent_port=ports["torrent"], webui_port=ports["qbittorrent"],
                            save_path=downloads, username=config.qbittorrent.username,
                            password_hash=qbt_password_hash(config.qbittorrent.password.get_secret_value()))
    paths.qbittorrent_conf.write_text(text, encoding="utf-8")
    os.chmod(paths.qbittorrent_conf, 0o600)
    # Torrents added by hand under the category land in the downloads folder too (adoption).
    categories = paths.qbittorrent_conf.parent / "categories.json"
    known = {}
    if categories.exists():
        try:
            known = json.loads(categories.read_text(encoding="utf-8"))
        except ValueError:
            known = {}
    known[config.qbittorrent.category] = {"save_path": str(downloads)}
    categories.write_text(json.dumps(known, indent=4, ensure_ascii=False), encoding="utf-8")
    return panel_account


# ---------------------------------------------------------------- what a crash left behind


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def is_stack_process(paths: StackPaths, service: str, argv: Sequence[str]) -> bool:
    """Tell whether a command line is that service of this stack (and not an unrelated process)."""
    if service == "mosquitto":
        return str(paths.mosquitto_conf) in argv
    if service == "qbittorrent":
        return f"--profile={paths.qbittorrent_profile}" in argv
    subcommand = "run" if service == "worker" else "panel"
    return str(paths.config) in argv and subcommand in argv


def stop_stale(paths: StackPaths, timeout: float = STOP_TIMEOUT) -> list[str]:
    """Stop the services a killed run left running (checked by command line); remove stale pid files."""
    stopped: list[str] = []
    for service in SERVICES:
        pid_file = paths.pid_file(service)
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            pid_file.unlink(missing_ok=True)
            continue
        if _alive(pid) and is_stack_process(paths, service, _cmdline(pid)):
            _terminate(pid, timeout)
            stopped.append(f"{service} (pid {pid})")
        pid_file.unlink(missing_ok=True)
    return stopped


def _terminate(pid: int, timeout: float) -> None:
    # Each service leads its own process group (setsid); signal the group, so helpers go too.
    def send(sig: int) -> None:
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            os.kill(pid, sig)

    send(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    send(signal.SIGKILL)
    while _alive(pid) and time.monotonic() < deadline + 5:
        time.sleep(0.02)


def port_in_use(port: int, kind: int = socket.SOCK_STREAM) -> bool:
    """Tell whether something holds `port` on 127.0.0.1 (TIME_WAIT leftovers do not count)."""
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def check_ports(ports: Mapping[str, int], *, panel: bool) -> None:
    """Fail with a clear message when a port the stack needs is taken by another program."""
    for name, port in ports.items():
        if name == "panel" and not panel:
            continue
        kinds = (socket.SOCK_STREAM, socket.SOCK_DGRAM) if name == "torrent" else (socket.SOCK_STREAM,)
        if any(port_in_use(port, kind) for kind in kinds):
            raise StackError(f"port {port} ({name}) on 127.0.0.1 is in use by another program; "
                             f"free it, or pick another port with {PORT_ENV[name]}=PORT (nothing "
                             "was written)")


def panel_available() -> bool:
    """Tell whether this checkout has the `jellybit panel` subcommand yet."""
    from jellybit.cli.local import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return "panel" in sub.choices


# ---------------------------------------------------------------- the commands


def prepare(paths: StackPaths, env: Mapping[str, str], ask: Ask | None = None) -> dict[str, str]:
    """Everything before the processes start; returns the variables the script needs."""
    for folder in paths.folders():
        folder.mkdir(parents=True, exist_ok=True)
    panel = panel_available()
    for line in stop_stale(paths):          # first: a killed run's services hold the ports
        print(f"run-local: stopped {line} left over from an earlier run", file=sys.stderr)
    config, ports = ensure_config(paths, env, ask, panel=panel)
    check_ports(ports, panel=panel)
    panel_account = write_service_configs(paths, config, ports)
    return {
        **panel_account,
        "JB_CONFIG": str(paths.config), "JB_LOGS": str(paths.logs), "JB_RUN": str(paths.run),
        "JB_HOME": str(paths.home), "JB_TMP": str(paths.tmp),
        "JB_MOSQUITTO_CONF": str(paths.mosquitto_conf), "JB_QBT_PROFILE": str(paths.qbittorrent_profile),
        "JB_MQTT_PORT": str(ports["mqtt"]), "JB_QBT_PORT": str(ports["qbittorrent"]),
        "JB_PANEL_PORT": str(ports["panel"]), "JB_PANEL": "1" if panel else "0",
    }


def summary(paths: StackPaths, config: Config, *, panel: bool) -> str:
    """Where everything is, for the terminal."""
    jellybit = Path(sys.executable).with_name("jellybit")
    password = config.qbittorrent.password.get_secret_value() if config.qbittorrent.password else ""
    logs = ", ".join(f"{s}.log" for s in reversed(SERVICES) if panel or s != "panel")
    panel_line = config.panel.base_url if panel else "not started (`jellybit panel` is not there yet)"
    if panel and config.panel.username and config.panel.password:
        panel_line += f"  user {config.panel.username}  password {config.panel.password.get_secret_value()}"
    providers = ", ".join(n for n in ("tvmaze", "tmdb", "tvdb") if getattr(config.metadata, n).enabled)
    own = account_passwords(paths.mosquitto_conf.parent / "accounts.json")
    cli, ha = own[CLI_ACCOUNT], own[HA_ACCOUNT]
    port, base = urlsplit(config.mqtt.url).port, config.mqtt.base_topic
    return "\n".join([
        "",
        "Jellybit is running. Ctrl-C stops everything.",
        f"  panel        {panel_line}",
        f"  broker       {config.mqtt.url}  (base topic {config.mqtt.base_topic})",
        f"  qBittorrent  {config.qbittorrent.url}  user {config.qbittorrent.username}  password {password}",
        f"  metadata     {providers or 'none: nothing is confirmed automatically'}",
        f"  downloads    {config.paths.downloads}",
        f"  movies       {config.paths.movies}",
        f"  series       {config.paths.series}",
        f"  database     {config.storage.database}",
        f"  config       {paths.config}",
        f"  logs         {paths.logs}/  ({logs})",
        "",
        f"  scripts      broker account {CLI_ACCOUNT}  password {cli}",
        f"  Home Assistant  broker account {HA_ACCOUNT}  password {ha}  (MQTT integration: 127.0.0.1 "
        f"port {port})",
        "",
        f"  try: {jellybit} --config {shlex.quote(str(paths.config))} add 'magnet:?xt=urn:btih:…'",
        f"       {jellybit} --config {shlex.quote(str(paths.config))} list",
        f"       mosquitto_sub -p {port} -u {CLI_ACCOUNT} -P {shlex.quote(cli)} -t '{base}/#' -v",
        f"       mosquitto_pub -p {port} -u {CLI_ACCOUNT} -P {shlex.quote(cli)} -t {base}/request/add "
        "-m 'magnet:?xt=urn:btih:…'",
        "",
    ])


async def _healthy(config: Config) -> list[str]:
    from jellybit.cli.health import healthcheck

    checks = await healthcheck(config, database=True, bus=True, timeout=1.0)
    return [f"{c.name}: {c.detail}" for c in checks if not c.ok]


def wait_ready(paths: StackPaths, pids: Sequence[int], *, panel: bool, timeout: float) -> None:
    """Wait until the health check passes (and the panel listens); fail if a service exits first."""
    config = load_config(paths.config)
    deadline = time.monotonic() + timeout
    failing: list[str] = ["not checked yet"]
    while time.monotonic() < deadline:
        dead = [pid for pid in pids if not _alive(pid)]
        if dead:
            raise StackError(f"a service exited while starting (pid {', '.join(map(str, dead))}); "
                             f"see the logs in {paths.logs}")
        failing = asyncio.run(_healthy(config))
        if not failing and (not panel or port_in_use(config.panel.port)):
            return
        time.sleep(0.1)
    raise StackError(f"the stack did not become healthy within {timeout:g} s: {'; '.join(failing) or 'panel'}"
                     f" (see the logs in {paths.logs})")


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m devstack prepare|wait --dir DIR`: the Python half of scripts/run-local."""
    parser = argparse.ArgumentParser(prog="python -m devstack", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="create the folder and configs; print shell variables")
    p.add_argument("--dir", required=True, type=Path)
    p = sub.add_parser("wait", help="wait until the stack is healthy, then print where everything is")
    p.add_argument("--dir", required=True, type=Path)
    p.add_argument("--pid", type=int, action="append", default=[], help="a service that must stay up")
    p.add_argument("--panel", action="store_true", help="also wait for the panel's port")
    p.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    paths = StackPaths(args.dir.absolute())
    try:
        if args.command == "prepare":
            ask = terminal_ask() if not paths.config.exists() else None
            for key, value in prepare(paths, os.environ, ask).items():
                print(f"{key}={shlex.quote(value)}")
        else:
            wait_ready(paths, args.pid, panel=args.panel, timeout=args.timeout)
            print(summary(paths, load_config(paths.config), panel=args.panel))
    except (StackError, ConfigError) as exc:
        print(f"run-local: {exc}", file=sys.stderr)
        return 1
    return 0
