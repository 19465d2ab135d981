"""`jellybit healthcheck` as a subprocess: healthy with a worker, and each way it can be unhealthy."""

from __future__ import annotations

import json
from pathlib import Path

from jellybit.adapters.store import Store
from jellybit.config import load_config
from tests.support.fake_jellyfin import FakeJellyfin
from tests.support.mosquitto import Broker
from tests.support.services import free_port
from tests.support.worker_process import WorkerProcess, eventually_retained, run_cli, worker_config


def checks(stdout: str) -> dict[str, tuple[bool, str]]:
    report = json.loads(stdout)
    return {c["name"]: (c["ok"], c["detail"]) for c in report["checks"]}


async def test_healthy_against_a_running_worker(worker: WorkerProcess, mosquitto: Broker) -> None:
    base = load_config(worker.config).mqtt.base_topic
    await eventually_retained(mosquitto.url, f"{base}/availability", lambda p: p == b"online")

    result = run_cli(worker.config, "healthcheck", "--json", "--no-services")

    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["healthy"] is True
    found = checks(result.stdout)
    storage = {name: found.pop(name) for name in
               ("storage database", "storage library.movies", "storage library.series")}
    assert all(ok and detail.endswith("iB free") for ok, detail in storage.values()), storage
    assert found == {
        "database": (True, f"{worker.config.parent / 'jellybit.db'}: quick_check ok"),
        "broker": (True, mosquitto.url),
        "worker availability": (True, "online"),
        "worker storage": (True, "no storage fault"),
        "worker answers": (True, "list answered ok"),
    }


async def test_unhealthy_without_a_worker(tmp_path: Path, mosquitto: Broker, store: Store) -> None:
    # The `store` fixture's database is migrated and healthy; only the worker is missing.
    config = worker_config(tmp_path / "cfg", mqtt_url=mosquitto.url, database=store.path)

    result = run_cli(config, "healthcheck", "--timeout", "0.5")

    assert result.returncode == 1
    assert "ok    database:" in result.stdout
    assert "ok    broker:" in result.stdout
    assert "FAIL  worker availability: nothing retained" in result.stdout
    assert "FAIL  worker answers: no answer from the Jellybit worker within 0.5 s" in result.stdout


def test_unhealthy_with_a_missing_library_folder(tmp_path: Path, store: Store) -> None:
    config = worker_config(tmp_path / "cfg", mqtt_url=f"mqtt://127.0.0.1:{free_port()}", database=store.path)
    series = tmp_path / "cfg" / "series"
    series.rmdir()                                  # a share that is not mounted leaves no folder

    result = run_cli(config, "healthcheck", "--no-bus")

    assert result.returncode == 1
    assert "ok    database:" in result.stdout
    assert "ok    storage library.movies: " in result.stdout
    assert (f"FAIL  storage library.series: library_unmounted: the series library is not mounted ({series}, "
            "the folder is missing); mount it again") in result.stdout


def test_unhealthy_with_a_missing_database(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "jellybit.db"
    config = worker_config(tmp_path, mqtt_url=f"mqtt://127.0.0.1:{free_port()}", database=missing)

    result = run_cli(config, "healthcheck", "--no-bus", "--json")

    assert result.returncode == 1
    assert json.loads(result.stdout)["healthy"] is False
    ok, detail = checks(result.stdout)["database"]
    assert not ok
    assert f"{missing} does not exist" in detail
    assert not missing.exists()               # a health check never creates the database
    assert not missing.parent.exists()


def test_unhealthy_with_an_unreachable_broker(tmp_path: Path) -> None:
    url = f"mqtt://127.0.0.1:{free_port()}"
    config = worker_config(tmp_path, mqtt_url=url)

    result = run_cli(config, "healthcheck", "--no-database", "--json")

    assert result.returncode == 1
    ok, detail = checks(result.stdout)["broker"]
    assert not ok
    assert f"cannot reach the MQTT broker at {url}" in detail
    assert set(checks(result.stdout)) == {"broker"}   # no worker checks without a broker


def test_the_panel_check_asks_its_port_over_http(tmp_path: Path) -> None:
    """Compose checks the panel by HTTP: a broker that binds accounts to client ids would hand the
    panel's session to a check that connected with the panel's account."""
    import http.server
    import threading

    class Login(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(307)
            self.send_header("Location", "/login?redirect_to=/")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    port = free_port()
    config = worker_config(tmp_path, mqtt_url=f"mqtt://127.0.0.1:{free_port()}")
    config.write_text(config.read_text() + f"\n[panel]\nport = {port}\nopen = true\n")
    down = run_cli(config, "healthcheck", "--no-bus", "--no-database", "--panel", "--json")
    assert down.returncode == 1
    assert checks(down.stdout)["panel"][0] is False
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Login)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        up = run_cli(config, "healthcheck", "--no-bus", "--no-database", "--panel", "--json")
    finally:
        server.shutdown()
        server.server_close()
    assert up.returncode == 0, up.stdout + up.stderr
    assert checks(up.stdout) == {"panel": (True, f"http://127.0.0.1:{port}/ answered 307")}


def test_jellyfin_libraries_are_checked_on_request(tmp_path: Path, fake_jellyfin: FakeJellyfin) -> None:
    """`--jellyfin-libraries`: a root no Jellyfin library covers fails the check, and says which."""
    fake_jellyfin.add_library("Movies", "movies", "/media/movies")
    fake_jellyfin.add_library("Music", "music", "/media/series")
    config = worker_config(tmp_path, mqtt_url=f"mqtt://127.0.0.1:{free_port()}", extra=f"""
[jellyfin]
enabled = true
url = "{fake_jellyfin.origin}"
api_key = "{FakeJellyfin.API_KEY}"

[[jellyfin.path_map]]
jellyfin = "/media"
local = "{tmp_path}"
""")
    result = run_cli(config, "healthcheck", "--no-bus", "--no-database", "--jellyfin-libraries", "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    found = checks(result.stdout)
    assert found["jellyfin movie root"] == (True, f"{tmp_path / 'movies'} is in the library 'Movies'")
    ok, detail = found["jellyfin series root"]
    assert not ok
    assert "'Music' of type music, not tvshows" in detail
    plain = run_cli(config, "healthcheck", "--no-bus", "--no-database", "--json")
    assert checks(plain.stdout) == {}                   # opt-in: compose's checks never ask Jellyfin
