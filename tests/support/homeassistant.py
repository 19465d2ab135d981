"""A real Home Assistant on loopback as an MQTT client of the test broker, one per session.

The recipe is docs testing.md §5: HA 2025.4.4 in its own venv on Python 3.13 (built by
`scripts/ha-venv` into a cache folder outside the repo and reused), a minimal configuration.yaml
(no default_config; the location is set so HA never looks it up), a user made with
`hass --script auth`, a token from the REST login flow, and, pre-seeded before the first start,
an MQTT config entry and a network config with only `lo` enabled. `--skip-pip` keeps HA from
installing anything at runtime; a start that falls into recovery mode fails at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from tests.support.mosquitto import Broker
from tests.support.services import free_port, unavailable

HA_VERSION = "2025.4.4"
REPO = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT = 600.0      # a first build downloads and installs HA (about 2 minutes)
START_TIMEOUT = 90.0         # the first start compiles bytecode (about 7 s; 2 s afterwards)
STOP_TIMEOUT = 15.0
USERNAME = "admin"

T = TypeVar("T")


def ha_venv() -> Path:
    """Find the cached HA venv, or build it (scripts/ha-venv); skip locally / fail in CI if impossible."""
    try:
        done = subprocess.run(["bash", str(REPO / "scripts" / "ha-venv")], capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        unavailable(f"installing Home Assistant {HA_VERSION} took over {INSTALL_TIMEOUT:g} s")
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        unavailable(f"no Home Assistant {HA_VERSION} venv (bash .ci/run installs it): {tail}")
    return Path(done.stdout.strip().splitlines()[-1])


def _configuration(port: int) -> str:
    # The location, unit system and country are set so HA detects nothing over the network. Without
    # default_config HA 2025.4 still sets up its built-in defaults (frontend, backup, analytics - which
    # sends nothing without onboarding -, network, person, ...), but no discovery integration.
    return (
        "homeassistant:\n"
        "  name: Jellybit test\n"
        "  latitude: 52.37\n"
        "  longitude: 4.89\n"
        "  elevation: 0\n"
        "  unit_system: metric\n"
        "  time_zone: UTC\n"
        "  currency: EUR\n"
        "  country: NL\n"
        f'  internal_url: "http://127.0.0.1:{port}"\n'
        "http:\n"
        "  server_host: 127.0.0.1\n"
        f"  server_port: {port}\n"
        "api:\n"
        "config:\n"
        # Automations and scripts from files the tests write (the blueprints in docs/blueprints/).
        "automation: !include automations.yaml\n"
        "script: !include scripts.yaml\n"
        "logger:\n"
        "  default: warning\n"
    )


def _mqtt_entry(broker: Broker) -> dict[str, Any]:
    # HA 2025.4 migrates this (version 1.1) layout on start; discovery on the default prefix.
    return {"version": 1, "minor_version": 1, "key": "core.config_entries", "data": {"entries": [{
        "entry_id": uuid.uuid4().hex, "version": 1, "minor_version": 1, "domain": "mqtt",
        "title": broker.host, "data": {"broker": broker.host, "port": broker.port, "discovery": True},
        "options": {}, "pref_disable_new_entities": False, "pref_disable_polling": False,
        "source": "user", "unique_id": None, "disabled_by": None,
    }]}}


# Onboarding marked done, so the frontend opens its pages (the screenshots) instead of the set-up wizard.
ONBOARDING = {"version": 4, "minor_version": 1, "key": "onboarding",
              "data": {"done": ["user", "core_config", "analytics", "integration"]}}
# Only loopback enabled: HA's aiohttp helper starts a zeroconf (mDNS) resolver that otherwise joins
# 224.0.0.251 on every interface; with `lo` alone it joins nothing (it skips loopback addresses).
NETWORK = {"version": 1, "minor_version": 1, "key": "core.network", "data": {"configured_adapters": ["lo"]}}


def wait_for(probe: Callable[[], T | None], *, within: float, what: str, interval: float = 0.1) -> T:
    """Call `probe` until it returns something truthy; RuntimeError at the deadline."""
    deadline = time.monotonic() + within
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"Home Assistant: {what} not reached within {within:g} s")
        time.sleep(interval)


@dataclass
class HomeAssistant:
    """One running `hass` with a logged-in admin; REST helpers for the tests."""

    venv: Path
    config_dir: Path
    broker: Broker
    port: int = field(default_factory=free_port)
    password: str = field(default_factory=lambda: "pw-" + secrets.token_hex(8))
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _access: str = field(default="", repr=False)
    _refresh: str = field(default="", repr=False)
    _expires: float = 0.0

    @property
    def url(self) -> str:
        """The HTTP base URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        """HA's own log."""
        return self.config_dir / "ha.log"

    def log_tail(self, lines: int = 30) -> str:
        """The end of HA's log (for failure messages)."""
        with contextlib.suppress(OSError):
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        return ""

    # ------------------------------------------------------------ lifecycle

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VIRTUAL_ENV"))}
        path = f"{self.venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
        return {**env, "HOME": str(self.config_dir), "TZ": "UTC", "PATH": path}

    def start(self) -> None:
        """Write the config, create the user, start hass and log in; bounded by START_TIMEOUT."""
        hass = str(self.venv / "bin" / "hass")
        (self.config_dir / ".storage").mkdir(parents=True, exist_ok=True)
        (self.config_dir / "configuration.yaml").write_text(_configuration(self.port))
        (self.config_dir / "automations.yaml").write_text("[]\n")
        (self.config_dir / "scripts.yaml").write_text("{}\n")
        storage = self.config_dir / ".storage"
        (storage / "core.config_entries").write_text(json.dumps(_mqtt_entry(self.broker)))
        (storage / "core.network").write_text(json.dumps(NETWORK))
        (storage / "onboarding").write_text(json.dumps(ONBOARDING))
        subprocess.run([hass, "--script", "auth", "-c", str(self.config_dir), "add", USERNAME, self.password],
                       check=True, capture_output=True, timeout=60, env=self._env(), stdin=subprocess.DEVNULL)
        output = (self.config_dir / "hass.out").open("wb")
        self.proc = subprocess.Popen(
            [hass, "-c", str(self.config_dir), "--log-file", str(self.log_file), "--skip-pip"],
            stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=self._env(),
        )
        output.close()
        try:
            with httpx.Client(base_url=self.url, timeout=5.0) as http:
                wait_for(lambda: self._answers(http), within=START_TIMEOUT, what="HTTP up")
                self._login(http)
                wait_for(lambda: self.rest(http, "GET", "/api/config").json().get("state") == "RUNNING",
                         within=START_TIMEOUT, what="state RUNNING")
                wait_for(lambda: self.mqtt_entry_state(http) == "loaded", within=START_TIMEOUT,
                         what="MQTT entry loaded")
        except Exception as exc:
            self.stop()
            raise RuntimeError(f"{exc}\n--- ha.log ---\n{self.log_tail()}") from exc

    def _answers(self, http: httpx.Client) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"hass exited with {self.proc.returncode}")
        # Recovery mode ignores configuration.yaml (it would serve 0.0.0.0:8123): stop at once.
        if "Activating recovery mode" in self.log_tail(200):
            raise RuntimeError("hass fell into recovery mode")
        try:
            return http.get("/api/").status_code == 401
        except httpx.TransportError:
            return False

    def stop(self) -> None:
        """SIGTERM, SIGKILL after STOP_TIMEOUT."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    # ------------------------------------------------------------ auth

    def _login(self, http: httpx.Client) -> None:
        client_id = f"{self.url}/"
        flow = http.post("/auth/login_flow", json={"client_id": client_id, "handler": ["homeassistant", None],
                                                   "redirect_uri": client_id})
        flow.raise_for_status()
        step = http.post(f"/auth/login_flow/{flow.json()['flow_id']}",
                         json={"client_id": client_id, "username": USERNAME, "password": self.password})
        step.raise_for_status()
        if step.json().get("type") != "create_entry":
            raise RuntimeError(f"login flow did not finish: {step.text}")
        self._token(http, {"grant_type": "authorization_code", "code": step.json()["result"],
                           "client_id": client_id})

    def _token(self, http: httpx.Client, form: dict[str, str]) -> None:
        reply = http.post("/auth/token", data=form)
        reply.raise_for_status()
        body = reply.json()
        self._access = body["access_token"]
        self._refresh = body.get("refresh_token", self._refresh)
        self._expires = time.monotonic() + float(body.get("expires_in", 1800))

    def tokens(self) -> dict[str, Any]:
        """The frontend's `hassTokens` (localStorage) for this login, so a browser opens pages logged in."""
        self.headers()  # refreshed if about to expire
        return {"hassUrl": self.url, "clientId": f"{self.url}/", "access_token": self._access,
                "refresh_token": self._refresh, "token_type": "Bearer", "expires_in": 1800,
                "expires": int((time.time() + max(self._expires - time.monotonic(), 0)) * 1000)}

    def headers(self) -> dict[str, str]:
        """The bearer header; the token (30 minutes) is refreshed when it is about to expire."""
        if time.monotonic() > self._expires - 120:
            with httpx.Client(base_url=self.url, timeout=10.0) as http:
                self._token(http, {"grant_type": "refresh_token", "refresh_token": self._refresh,
                                   "client_id": f"{self.url}/"})
        return {"Authorization": f"Bearer {self._access}"}

    # ------------------------------------------------------------ REST

    def rest(self, http: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A synchronous authenticated call (set-up and waits)."""
        reply = http.request(method, path, headers=self.headers(), **kwargs)
        reply.raise_for_status()
        return reply

    def client(self) -> httpx.AsyncClient:
        """An authenticated async REST client (for use inside async tests)."""
        return httpx.AsyncClient(base_url=self.url, headers=self.headers(), timeout=10.0)

    def mqtt_entry_state(self, http: httpx.Client) -> str | None:
        """The state of the MQTT config entry (`loaded` when HA is connected to the broker)."""
        entries = self.rest(http, "GET", "/api/config/config_entries/entry").json()
        return next((e.get("state") for e in entries if e.get("domain") == "mqtt"), None)


async def device_entities(rest: httpx.AsyncClient, identifier: str) -> dict[str, dict[str, Any]]:
    """entity_id → state object of every entity of the MQTT device with this identifier."""
    template = (
        "{%- set ns = namespace(ids=[]) -%}"
        "{%- for e in integration_entities('mqtt') -%}"
        "{%- if ('mqtt', '" + identifier + "') in (device_attr(device_id(e), 'identifiers') or []) -%}"
        "{%- set ns.ids = ns.ids + [e] -%}{%- endif -%}{%- endfor -%}{{ ns.ids | tojson }}"
    )
    reply = await rest.post("/api/template", json={"template": template})
    reply.raise_for_status()
    wanted = set(json.loads(reply.text))
    states = await rest.get("/api/states")
    states.raise_for_status()
    return {s["entity_id"]: s for s in states.json() if s["entity_id"] in wanted}


@pytest.fixture(scope="session")
def home_assistant(mosquitto: Broker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HomeAssistant]:
    """A real Home Assistant connected to the session broker, discovery on `homeassistant/`."""
    ha = HomeAssistant(ha_venv(), tmp_path_factory.mktemp("homeassistant"), mosquitto)
    ha.start()
    try:
        yield ha
    finally:
        ha.stop()
