"""docker-compose.yml and the Dockerfile agree with the code: env names, writable paths, volumes."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import yaml

from jellybit.config import ACCOUNT_ENV, CONFIG_ENV, SECRET_ENV, Config, load_config

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")


def environment(service: str) -> dict[str, str]:
    return {k: str(v) for k, v in (COMPOSE["services"][service].get("environment") or {}).items()}


def mounts(service: str) -> dict[str, str]:
    """Container path -> source (a named volume or a host path) of a service's volumes."""
    found = {}
    for entry in COMPOSE["services"][service].get("volumes") or []:
        source, target, *_ = entry.split(":")
        found[target] = source
    return found


def dockerfile_env() -> dict[str, str]:
    pairs: dict[str, str] = {}
    for line in re.findall(r"(?m)^ENV (.+)$", DOCKERFILE):
        pairs.update(dict(re.findall(r"(\w+)=(\S+)", line)))
    return pairs


def owned_folders() -> set[str]:
    """Folders the image creates and hands to its user (`mkdir -p …` and `chown 1000:1000 …`)."""
    made = re.search(r"mkdir -p ([^\n&\\]+)", DOCKERFILE)
    owned = re.search(r"chown 1000:1000 ([^\n&\\]+)", DOCKERFILE)
    assert made is not None
    assert owned is not None
    return set(made.group(1).split()) & set(owned.group(1).split())


def test_every_jellybit_variable_in_compose_is_one_the_code_reads() -> None:
    known = {CONFIG_ENV, *SECRET_ENV, *ACCOUNT_ENV}
    for name in COMPOSE["services"]:
        unknown = {k for k in environment(name) if k.startswith("JELLYBIT_")} - known
        assert not unknown, f"{name}: {unknown} are read by nothing"


def test_the_worker_keeps_its_database_on_a_volume() -> None:
    folder = str(PurePosixPath(str(Config().storage.database)).parent)
    assert mounts("worker")[folder] in COMPOSE["volumes"]
    assert folder in owned_folders()


def test_the_panel_keeps_its_sessions_on_a_writable_volume() -> None:
    """NiceGUI writes per-user storage; /app is the root-owned code, so it must go elsewhere."""
    storage = dockerfile_env()["NICEGUI_STORAGE_PATH"]
    assert environment("panel")["NICEGUI_STORAGE_PATH"] == storage
    assert mounts("panel")[storage] in COMPOSE["volumes"]
    assert storage in owned_folders()
    assert "JELLYBIT_PANEL_STORAGE_SECRET" in environment("panel")


def test_services_run_as_the_image_user() -> None:
    assert "USER 1000:1000" in DOCKERFILE
    for name in ("worker", "panel"):
        assert COMPOSE["services"][name]["user"] == "1000:1000"


def test_the_worker_takes_the_metadata_keys_from_the_environment_and_they_turn_providers_on() -> None:
    """TVMaze needs nothing; a TMDB or TVDB key in compose's environment is enough to use it."""
    worker = environment("worker")
    for provider in ("TMDB_API_KEY", "TVDB_API_KEY", "TVDB_PIN"):
        name = f"JELLYBIT_METADATA_{provider}"
        assert worker[name] == f"${{{name}:-}}"
    keyed = load_config(env={"JELLYBIT_METADATA_TMDB_API_KEY": "k"}).metadata
    assert (keyed.tvmaze.enabled, keyed.tmdb.enabled, keyed.tvdb.enabled) == (True, True, False)


def test_every_published_port_is_on_loopback_with_a_lan_line_commented_out() -> None:
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    for name, service in COMPOSE["services"].items():
        for port in service.get("ports") or []:
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every interface"
            container = str(port).rsplit(":", 1)[1]
            assert f'# ports: ["{container}:{container}"]' in text, f"{name}: no commented LAN line"


def test_no_health_check_connects_with_an_account_a_running_process_holds() -> None:
    """The broker binds each account to one client id: a check with the worker's or the panel's
    account would take over that process's session every interval."""
    assert "use_username_as_clientid true" in (ROOT / "mosquitto" / "mosquitto.conf").read_text()
    assert "--no-bus" in COMPOSE["services"]["worker"]["healthcheck"]["test"]
    panel_check = COMPOSE["services"]["panel"]["healthcheck"]["test"]
    assert "--no-bus" in panel_check
    assert "--panel" in panel_check
    assert "-u health " in COMPOSE["services"]["mosquitto"]["healthcheck"]["test"][1]
    assert environment("panel")["JELLYBIT_MQTT_USERNAME"] == "panel"
    acl = (ROOT / "mosquitto" / "acl").read_text()
    for account in ("jellybit", "panel", "homeassistant", "cli", "health"):
        assert f"user {account}\n" in acl


def test_the_image_copies_everything_the_wheel_is_built_from() -> None:
    """`pip install .` in the image needs the packages and the force-included SQL (migrations/)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    needed = set(wheel["packages"]) | set(wheel.get("force-include", {}))
    copied = {m.group(1).rstrip("/") for m in re.finditer(r"^COPY\s+(\S+)\s+\./", DOCKERFILE, re.M)}
    assert "migrations" in needed
    assert needed <= copied, f"the Dockerfile does not COPY {sorted(needed - copied)}"
