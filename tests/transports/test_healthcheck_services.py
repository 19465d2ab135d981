"""`jellybit healthcheck` names each outside service as the worker sees it, with what to do: a stopped
qBittorrent, metadata providers and Jellyfin that refuse their keys (HTTP 401), an LLM server nobody
runs. (Each keyed service as ok, refused and unreachable: test_service_health_keys.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from jellybit.config import load_config
from tests.support.fake_jellyfin import FakeJellyfin
from tests.support.fake_metadata import FakeTmdb, FakeTvdb
from tests.support.mosquitto import Broker
from tests.support.services import free_port
from tests.support.worker_process import WorkerProcess, as_json, eventually_retained, run_cli, worker_config


def by_name(stdout: str) -> dict[str, dict[str, object]]:
    return {check["name"]: check for check in json.loads(stdout)["checks"]}


async def test_each_failing_service_is_named_with_what_to_do(tmp_path: Path, mosquitto: Broker,
                                                             fake_tmdb: FakeTmdb, fake_tvdb: FakeTvdb,
                                                             fake_jellyfin: FakeJellyfin) -> None:
    stopped = free_port()               # qBittorrent is not running: nothing listens on its port
    no_llm = free_port()
    config = worker_config(tmp_path, mqtt_url=mosquitto.url, qbittorrent_url=f"http://127.0.0.1:{stopped}",
                           extra=f"""
[metadata.tmdb]
api_key = "wrong-key-{'0' * 22}"
base_url = "{fake_tmdb.base_url}"

[metadata.tvdb]
enabled = true
api_key = "wrong-tvdb-key"
base_url = "{fake_tvdb.base_url}"

[llm]
enabled = true
base_url = "http://127.0.0.1:{no_llm}/v1"
api_key = "local"

[jellyfin]
enabled = true
url = "{fake_jellyfin.origin}"
api_key = "wrong-jellyfin-key"
confirm = false
""")
    worker = WorkerProcess(config, tmp_path / "worker.log")
    worker.start()
    try:
        base = load_config(config, env={}).mqtt.base_topic

        def settled(payload: bytes) -> bool:
            info = as_json(payload) or {}
            return (info.get("qbittorrent", {}).get("state") == "unreachable"
                    and info.get("metadata", {}).get("tmdb", {}).get("state") == "refused"
                    and info.get("metadata", {}).get("tvdb", {}).get("state") == "refused"
                    and info.get("llm", {}).get("state") == "unreachable"
                    and info.get("jellyfin", {}).get("state") == "refused")

        await eventually_retained(mosquitto.url, f"{base}/info", settled, within=60)
        result = run_cli(config, "healthcheck", "--json")
        text = run_cli(config, "healthcheck")
    finally:
        worker.close()

    assert result.returncode == 1
    checks = by_name(result.stdout)
    assert checks["worker answers"]["ok"] is True
    qbt, tmdb, llm = checks["qbittorrent"], checks["metadata.tmdb"], checks["llm"]
    assert (qbt["ok"], qbt["state"]) == (False, "unreachable")
    assert f"127.0.0.1:{stopped}" in str(qbt["detail"])
    assert "start qBittorrent, or set qbittorrent.url" in str(qbt["hint"])
    assert (tmdb["ok"], tmdb["state"]) == (False, "refused")
    assert "HTTP 401" in str(tmdb["detail"])
    assert "JELLYBIT_METADATA_TMDB_API_KEY" in str(tmdb["hint"])
    assert (llm["ok"], llm["state"]) == (False, "unreachable")
    assert f"127.0.0.1:{no_llm}" in str(llm["detail"])
    assert "start the LLM server at llm.base_url" in str(llm["hint"])
    tvdb, jellyfin = checks["metadata.tvdb"], checks["jellyfin"]
    assert (tvdb["ok"], tvdb["state"]) == (False, "refused")
    assert "InvalidAPIKey" in str(tvdb["detail"])
    assert "JELLYBIT_METADATA_TVDB_API_KEY" in str(tvdb["hint"])
    assert (jellyfin["ok"], jellyfin["state"]) == (False, "refused")
    assert "JELLYBIT_JELLYFIN_API_KEY" in str(jellyfin["hint"])
    assert "wrong-tvdb-key" not in result.stdout
    assert "wrong-jellyfin-key" not in result.stdout
    # What is merely not configured is said, with its hint, and does not fail the check.
    assert (checks["telegram"]["ok"], checks["telegram"]["state"]) == (True, "not configured")
    # The text form puts each on one line: FAIL, the name, the state, the reason and the hint.
    assert text.returncode == 1
    lines = {line.split(":", 1)[0]: line for line in text.stdout.splitlines()}
    assert lines["FAIL  qbittorrent"].startswith("FAIL  qbittorrent: unreachable: ")
    assert " — start qBittorrent" in lines["FAIL  qbittorrent"]
    assert lines["FAIL  metadata.tmdb"].startswith("FAIL  metadata.tmdb: refused: ")
    assert lines["FAIL  llm"].startswith("FAIL  llm: unreachable: ")
    assert lines["FAIL  jellyfin"].startswith("FAIL  jellyfin: refused: ")


def test_a_film_without_a_tmdb_key_is_said_in_the_health_check(tmp_path: Path) -> None:
    """Not configured is no failure, but the check says what films need."""
    from jellybit.cli.health import service_checks
    from jellybit.protocol import InfoPayload
    from jellybit.transports import service_health

    config = load_config(worker_config(tmp_path, mqtt_url=f"mqtt://127.0.0.1:{free_port()}"), env={})
    info = InfoPayload(version="x", started_at="now",
                       metadata={"tmdb": service_health.provider_status(config, "tmdb", None)})
    (tmdb,) = [c for c in service_checks(info) if c.name == "metadata.tmdb"]
    assert tmdb.ok
    assert "films need a TMDB key: get one at https://www.themoviedb.org/settings/api" in tmdb.detail


async def test_a_wrong_bot_token_is_named_refused_not_running(tmp_path: Path, mosquitto: Broker) -> None:
    """The worker's status said the bot was running with no error while Telegram refused the token."""
    from tests.support.fake_telegram import FakeTelegram

    telegram = FakeTelegram()
    telegram.start()
    config = worker_config(tmp_path, mqtt_url=mosquitto.url, extra=f"""
[telegram]
enabled = true
base_url = "{telegram.base_url}"
allowed_user_ids = [1]
""")
    wrong = {"JELLYBIT_TELEGRAM_TOKEN": "123:wrong-token"}
    worker = WorkerProcess(config, tmp_path / "worker.log", env=wrong)
    worker.start()
    try:
        base = load_config(config, env={}).mqtt.base_topic
        payload = await eventually_retained(
            mosquitto.url, f"{base}/info",
            lambda p: (as_json(p) or {}).get("telegram", {}).get("state") == "refused", within=60)
        result = run_cli(config, "healthcheck", "--json")
    finally:
        worker.close()
        telegram.stop()
    status = as_json(payload)["telegram"]
    assert status["connected"] is False
    assert "JELLYBIT_TELEGRAM_TOKEN" in status["hint"]
    assert "wrong-token" not in json.dumps(status)              # the token is never shown
    assert result.returncode == 1
    check = by_name(result.stdout)["telegram"]
    assert (check["ok"], check["state"]) == (False, "refused")
