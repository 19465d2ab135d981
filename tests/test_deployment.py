"""docker-compose.yml and the Dockerfile agree with the code: env names, writable paths, volumes."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import yaml

from jellybit.config import CONFIG_ENV, Config, env_key, load_config

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
    """Each JELLYBIT_* variable of a container sets a config key, names the config, or is read by
    that container's health check."""
    for name, service in COMPOSE["services"].items():
        check = " ".join(service.get("healthcheck", {}).get("test", []))
        unknown = {k for k in environment(name) if k.startswith("JELLYBIT_")
                   and k != CONFIG_ENV and env_key(k) is None and f"$${k}" not in check}
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
    account would take over that process's session every interval. The worker's check goes over the
    bus with its own account (`probe`); the panel's goes through the address its published port
    forwards to (the service name), not loopback."""
    assert "use_username_as_clientid true" in (ROOT / "mosquitto" / "mosquitto.conf").read_text()
    worker_check = COMPOSE["services"]["worker"]["healthcheck"]["test"][1]
    assert "JELLYBIT_MQTT_USERNAME=probe " in worker_check
    assert "--no-bus" not in worker_check
    assert "--no-services" in worker_check
    panel_check = COMPOSE["services"]["panel"]["healthcheck"]["test"]
    assert "--no-bus" in panel_check
    assert panel_check[panel_check.index("--panel-url") + 1] == "http://panel:8099/login"
    assert "-u health " in COMPOSE["services"]["mosquitto"]["healthcheck"]["test"][1]
    assert environment("worker")["JELLYBIT_MQTT_USERNAME"] == "jellybit"
    assert environment("panel")["JELLYBIT_MQTT_USERNAME"] == "panel"
    acl = (ROOT / "mosquitto" / "acl").read_text()
    for account in ("jellybit", "panel", "homeassistant", "cli", "health", "probe"):
        assert f"user {account}\n" in acl


def test_every_health_check_has_a_start_period() -> None:
    for name in ("mosquitto", "worker", "panel"):
        assert "start_period" in COMPOSE["services"][name]["healthcheck"], name


def test_the_containers_reach_the_broker_and_the_published_port_by_their_own_addresses() -> None:
    """Not 127.0.0.1 inside a container: the broker is the `mosquitto` service, the panel listens on
    every interface of its container (the published port arrives there)."""
    for name in ("worker", "panel"):
        assert environment(name)["JELLYBIT_MQTT_URL"] == "mqtt://mosquitto:1883"
    assert environment("panel")["JELLYBIT_PANEL_HOST"] == "0.0.0.0"
    published = COMPOSE["services"]["panel"]["ports"][0]
    assert published.endswith(":" + environment("panel")["JELLYBIT_PANEL_PORT"])


def test_the_broker_config_is_read_only_and_its_state_on_a_volume() -> None:
    volumes = COMPOSE["services"]["mosquitto"]["volumes"]
    assert "./mosquitto:/mosquitto/config:ro" in volumes
    assert mounts("mosquitto")["/mosquitto/data"] in COMPOSE["volumes"]


def test_images_and_packages_are_pinned() -> None:
    """No `latest`, full version tags, and every package the image installs at an exact version."""
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    assert ":latest" not in text
    for name, service in COMPOSE["services"].items():
        image = service.get("image", "")
        if image.startswith("${"):
            continue
        assert re.search(r":\d+\.\d+\.\d+$", image), f"{name}: {image} is not a full version tag"
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", DOCKERFILE, re.M)
    assert base is not None
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm", base.group(1))
    assert "pip install -r constraints.txt" in DOCKERFILE
    assert "pip install --no-deps --no-build-isolation ." in DOCKERFILE
    pins = dict(re.findall(r"(?m)^([A-Za-z0-9_.-]+)==(\S+)$", (ROOT / "constraints.txt").read_text()))
    assert "hatchling" in pins                  # the build backend is locked too
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    canonical = {re.sub(r"[-_.]+", "-", n).lower() for n in pins}
    for requirement in project["project"]["dependencies"]:
        name = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
        assert re.sub(r"[-_.]+", "-", name).lower() in canonical, f"{name} is not in constraints.txt"


def test_secrets_and_build_leftovers_stay_out_of_git_and_the_build_context() -> None:
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    for path in ("/.env", "/config/", "/mosquitto/passwd", ".venv/", "/var/"):
        assert path in ignored, path
    context = (ROOT / ".dockerignore").read_text().splitlines()
    assert context[context.index("*") if "*" in context else -1] == "*"     # nothing unless listed
    allowed = {line[1:].rstrip("/") for line in context if line.startswith("!")}
    copied = {m.group(1).rstrip("/") for m in re.finditer(r"^COPY\s+(.+?)\s+\./", DOCKERFILE, re.M)}
    copied = {part for group in copied for part in group.split()}
    assert copied <= allowed, f"the build context lacks {copied - allowed}"
    assert not {".env", "config", ".venv", "mosquitto", "var", ".git"} & allowed


def test_the_image_copies_everything_the_wheel_is_built_from() -> None:
    """`pip install .` in the image needs the packages and the force-included SQL (migrations/)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    needed = set(wheel["packages"]) | set(wheel.get("force-include", {}))
    copied = {m.group(1).rstrip("/") for m in re.finditer(r"^COPY\s+(\S+)\s+\./", DOCKERFILE, re.M)}
    assert "migrations" in needed
    assert needed <= copied, f"the Dockerfile does not COPY {sorted(needed - copied)}"
