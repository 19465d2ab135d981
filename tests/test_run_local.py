"""`scripts/run-local` end to end: the whole stack starts, answers, stops on Ctrl-C, starts again
with the same config, and recovers from a crash that left stale pid files and orphans behind."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from devstack.stack import StackPaths, panel_available, stop_stale

from jellybit.client import JellybitClient
from jellybit.config import load_config
from jellybit.protocol import Command
from tests.support.network_guard import loopback_problems
from tests.support.qbittorrent import magnet
from tests.support.services import free_port, require_binary
from tests.support.worker_process import process_env, run_cli

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "run-local"
READY = "Jellybit is running."
START_TIMEOUT = 120.0


def alive(pid: int) -> bool:
    """Running and not a zombie (an orphan's zombie may wait for a reaper that never comes)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _address(hex_address: str, v6: bool) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if v6:   # four little-endian 32-bit words
        return ipaddress.IPv6Address(b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))), int(port, 16)
    return ipaddress.IPv4Address(raw[::-1]), int(port, 16)


def local_addresses(pid: int) -> list[tuple[str, ipaddress.IPv4Address | ipaddress.IPv6Address, int]]:
    """(protocol, address, port) of every TCP/UDP socket the process holds, from /proc."""
    table: dict[int, tuple[str, ipaddress.IPv4Address | ipaddress.IPv6Address, int]] = {}
    for name in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/net/{name}").read_text().splitlines()[1:]:
            fields = line.split()
            table[int(fields[9])] = (name, *_address(fields[1], name.endswith("6")))
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        match = re.fullmatch(r"socket:\[(\d+)\]", target)
        if match and int(match[1]) in table:
            found.append(table[int(match[1])])
    return found


def loopback_only(pid: int) -> list[str]:
    """The sockets of a process bound beyond loopback (empty = fine)."""
    bad = []
    for proto, address, port in local_addresses(pid):
        mapped = getattr(address, "ipv4_mapped", None)
        if address.is_loopback or (mapped is not None and mapped.is_loopback):
            continue
        if address.is_unspecified and port == 0:      # created, not bound yet
            continue
        bad.append(f"{proto} {address}:{port}")
    return bad


class LocalStack:
    """Runs the script against a folder in tmp_path, with free ports and a HOME/TMPDIR/cwd of its own
    that must stay empty (the stack writes only inside its folder)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.paths = StackPaths(tmp_path / "local")
        self.outside = {name: tmp_path / "outside" / name for name in ("home", "tmp", "cwd")}
        for folder in self.outside.values():
            folder.mkdir(parents=True)
        self.env = process_env(
            JELLYBIT_LOCAL_DIR=str(self.paths.root),
            JELLYBIT_LOCAL_MQTT_PORT=str(free_port()),
            JELLYBIT_LOCAL_QBITTORRENT_PORT=str(free_port()),
            JELLYBIT_LOCAL_TORRENT_PORT=str(free_port()),
            JELLYBIT_LOCAL_PANEL_PORT=str(free_port()),
            JELLYBIT_LOCAL_VENV=sys.prefix,
            JELLYBIT_LOCAL_TVMAZE="0",          # no provider beyond loopback (the network guard)
            HOME=str(self.outside["home"]),
            TMPDIR=str(self.outside["tmp"]),
            PATH=os.environ.get("PATH", "") + ":/usr/sbin",
        )
        self.runs = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def output_file(self) -> Path:
        return self.tmp / f"run-{self.runs}.out"

    def output(self) -> str:
        return self.output_file.read_text(errors="replace")

    def start(self, *, ignoring: tuple[signal.Signals, ...] = ()) -> subprocess.Popen[bytes]:
        """Start the script in its own session, as a terminal would (it leads its process group).

        Its stop signals start with their default action — whatever pytest's own parent did with
        them (a background job ignores SIGINT) — unless `ignoring` names some, as nohup or a
        background job of a script would pass them on.
        """
        self.runs += 1
        dispositions = {sig: "SIG_IGN" if sig in ignoring else "SIG_DFL" for sig in STOP_SIGNALS}
        with self.output_file.open("wb") as out:
            self.proc = subprocess.Popen([*with_signals(dispositions), str(SCRIPT)], env=self.env,
                                         cwd=self.outside["cwd"], stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        return self.proc

    def close(self) -> None:
        """Whatever happened in the test: the script and every service it started are gone after."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_WAIT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        stop_stale(self.paths, timeout=5)

    def wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT
        while READY not in self.output():
            if self.proc.poll() is not None:
                pytest.fail(f"run-local exited with {self.proc.returncode}:\n{self.output()}{self.logs()}")
            if time.monotonic() > deadline:
                pytest.fail(f"run-local not ready within {START_TIMEOUT} s:\n{self.output()}{self.logs()}")
            time.sleep(0.1)

    def logs(self) -> str:
        return "".join(f"\n--- {log.name}\n{log.read_text(errors='replace')[-3000:]}"
                       for log in sorted(self.paths.logs.glob("*.log")))

    def services(self) -> dict[str, int]:
        """The running services, from the pid files."""
        return {f.stem: int(f.read_text()) for f in sorted(self.paths.run.glob("*.pid"))}

    def interrupt(self, sig: signal.Signals = signal.SIGINT) -> int:
        """Ctrl-C (or another stop signal) to the script; its exit code."""
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(STOP_WAIT)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
STOP_WAIT = 60


def with_signals(dispositions: dict[signal.Signals, str]) -> list[str]:
    """A prefix that sets signal dispositions, then execs the rest of the command line."""
    code = ("import os, signal, sys\n"
            + "".join(f"signal.signal(signal.{sig.name}, signal.{how})\n"
                      for sig, how in dispositions.items())
            + "os.execv(sys.argv[1], sys.argv[1:])")
    return [sys.executable, "-c", code]


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[LocalStack]:
    """The script's folder in tmp_path; stopped in teardown even when the test failed."""
    local = LocalStack(tmp_path)
    try:
        yield local
    finally:
        local.close()


def wait_until(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s")
        time.sleep(0.05)


def request(config: Path, command: Command, payload: dict[str, object]) -> dict[str, object]:
    """One command over the stack's broker, answered `ok`; its data."""
    async def send() -> dict[str, object]:
        async with JellybitClient(load_config(config).mqtt, name="test") as client:
            response = await client.request(command, payload)
        assert response.status == "ok", response.error
        return response.model_dump(mode="json", by_alias=True, exclude_unset=True)["data"]  # as sent

    return asyncio.run(send())


@pytest.mark.timeout(540)
def test_run_local_twice_in_a_row_and_after_a_crash(stack: LocalStack) -> None:
    for binary in ("mosquitto", "qbittorrent-nox", "flock", "setsid"):
        if binary != "mosquitto" or not Path("/usr/sbin/mosquitto").exists():
            require_binary(binary)
    expected = {"mosquitto", "qbittorrent", "worker"} | ({"panel"} if panel_available() else set())
    config = stack.paths.config

    # ---- first run: everything is created, healthy, on loopback only
    stack.start()
    stack.wait_ready()
    services = stack.services()
    assert set(services) == expected
    assert all(parent_of(pid) == stack.proc.pid for pid in services.values())  # type: ignore[union-attr]
    for name, pid in services.items():
        assert loopback_only(pid) == [], name
    loaded = load_config(config)
    assert loopback_problems(loaded) == []
    assert not loaded.metadata.tvmaze.enabled
    assert "metadata     none: nothing is confirmed automatically" in stack.output()
    password = loaded.qbittorrent.password.get_secret_value()  # type: ignore[union-attr]
    assert f"password {password}" in stack.output()
    assert str(stack.paths.media / "movies") in stack.output()
    assert config.stat().st_mode & 0o777 == 0o600

    health = run_cli(config, "healthcheck")
    assert health.returncode == 0, health.stdout + health.stderr
    assert "FAIL" not in health.stdout
    for name in ("database", "storage database", "storage library.movies", "storage library.series",
                 "worker storage", "broker", "worker availability", "worker answers", "qbittorrent",
                 "metadata.tmdb", "llm", "jellyfin", "telegram"):
        assert f"ok    {name}: " in health.stdout, name

    # The printed scripting account works with mosquitto_pub as printed (a magnet in place of …).
    printed = next(line.strip() for line in stack.output().splitlines()
                   if line.strip().startswith("mosquitto_pub "))
    command = shlex.split(printed)
    command[command.index("-m") + 1] = magnet(name="Scripted.By.Mosquitto.Pub")
    published = subprocess.run([require_binary("mosquitto_pub"), *command[1:]], capture_output=True,
                               text=True, timeout=30, check=False)
    assert published.returncode == 0, published.stderr
    wait_until(lambda: any(item["name"] == "Scripted.By.Mosquitto.Pub"  # type: ignore[index]
                           for item in request(config, Command.LIST, {})["items"]))  # type: ignore[union-attr]

    second = subprocess.run([str(SCRIPT)], env=stack.env, cwd=stack.outside["cwd"], capture_output=True,
                            text=True, timeout=60, check=False)
    assert second.returncode == 1
    assert "already running" in second.stderr

    added = run_cli(config, "add", magnet(name="Local.Stack.Test"), "--context", "a test")
    assert added.returncode == 0, added.stderr
    download_id = added.stdout.split()[0]
    # The worker logs in to the stack's qBittorrent with the generated password and hands it over.
    def state() -> object:
        return request(config, Command.GET, {"id": download_id})["download"]["state"]  # type: ignore[index]

    wait_until(lambda: state() == "downloading")

    assert stack.interrupt(signal.SIGHUP) == 0             # a closed terminal stops it like Ctrl-C
    assert not [name for name, pid in services.items() if alive(pid)]
    assert stack.services() == {}
    assert "stopped" in stack.output()

    # ---- second run: the same config (and password) and the same database; started the way a
    # background job or nohup starts it (SIGINT and SIGHUP ignored), Ctrl-C still stops it
    text = config.read_text()
    stack.start(ignoring=(signal.SIGINT, signal.SIGHUP))
    stack.wait_ready()
    assert config.read_text() == text
    listed = request(config, Command.LIST, {})
    assert download_id in [item["id"] for item in listed["items"]]  # type: ignore[index]
    services = stack.services()
    assert stack.interrupt(signal.SIGINT) == 0
    assert not [name for name, pid in services.items() if alive(pid)]
    assert stack.services() == {}

    # ---- a crash: the script dies with SIGKILL, then two services; the others are left as orphans
    stack.start()
    stack.wait_ready()
    services = stack.services()
    stack.proc.kill()  # type: ignore[union-attr]
    stack.proc.wait(10)  # type: ignore[union-attr]
    for name in ("worker", "qbittorrent"):
        os.kill(services[name], signal.SIGKILL)
    wait_until(lambda: not alive(services["worker"]) and not alive(services["qbittorrent"]))
    orphans = {name: pid for name, pid in services.items() if name not in ("worker", "qbittorrent")}
    assert all(alive(pid) for pid in orphans.values())

    # ---- the next run: stale pid files and orphans are cleaned up, and everything comes back
    stack.start()
    stack.wait_ready()
    for name, pid in orphans.items():
        assert f"stopped {name} (pid {pid}) left over from an earlier run" in stack.output()
        assert not alive(pid)
    services = stack.services()
    assert set(services) == expected
    listed = request(config, Command.LIST, {})
    assert download_id in [item["id"] for item in listed["items"]]  # type: ignore[index]

    # ---- a service dies while the script runs: it stops the others and exits with an error
    os.kill(services["worker"], signal.SIGKILL)
    assert stack.proc.wait(60) == 1  # type: ignore[union-attr]
    assert "worker exited" in stack.output()
    assert not [name for name, pid in services.items() if alive(pid)]
    assert stack.services() == {}

    # Nothing was written outside the stack's folder.
    assert {name: sorted(p.name for p in folder.iterdir()) for name, folder in stack.outside.items()} == {
        name: [] for name in stack.outside}


def test_a_busy_port_on_the_first_run_is_named_and_nothing_is_written(stack: LocalStack) -> None:
    """The script stops before writing its config, so the same command with another port works."""
    import socket

    port = int(stack.env["JELLYBIT_LOCAL_MQTT_PORT"])
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        stack.start()
        assert stack.proc is not None
        assert stack.proc.wait(120) == 1
    out = stack.output()
    assert f"port {port} (mqtt) on 127.0.0.1 is in use by another program" in out
    assert "JELLYBIT_LOCAL_MQTT_PORT=PORT (nothing was written)" in out
    assert not stack.paths.config.exists()
    assert stack.services() == {}
