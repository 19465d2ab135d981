"""Human output of the CLI over MQTT against a real worker process and broker."""

from __future__ import annotations

from jellybit.cli.remote import _ranges, format_title
from tests.support.mosquitto import Broker
from tests.support.worker_process import WorkerProcess, eventually_retained, run_cli

HASH = "89abcdef0123456789abcdef0123456789abcdef"


async def test_add_wait_prints_one_line_per_change_when_not_a_terminal(
    worker: WorkerProcess, mosquitto: Broker
) -> None:
    topic = f"{worker_base(worker)}/availability"
    await eventually_retained(mosquitto.url, topic, lambda p: p == b"online")
    # qBittorrent is unreachable in this config, so the download stays queued until we give up.
    result = run_cli(worker.config, "add", HASH, "--context", "Фарго", "--wait", "--wait-timeout", "3")
    assert result.returncode == 4, result.stderr
    assert "\r" not in result.stdout
    lines = result.stdout.splitlines()
    assert "created" in lines[0]
    assert len([line for line in lines if "queued" in line]) == 1
    assert "gave up waiting" in result.stderr


def worker_base(worker: WorkerProcess) -> str:
    for line in worker.config.read_text(encoding="utf-8").splitlines():
        if line.startswith("base_topic"):
            return line.split("=", 1)[1].strip().strip('"')
    raise AssertionError("no base_topic")


def test_titles_are_shown_with_their_coverage() -> None:
    text = format_title({"provider": "tvdb", "provider_id": "269613", "title": "Fargo", "year": 2014,
                         "media_type": "series",
                         "folders": ["/srv/media/series/Fargo (2014) [tvdbid-269613]"],
                         "seasons": {"2": [1, 2, 3, 5], "1": [1]},
                         "members": [{"download_id": "01jf", "state": "done", "display_name": "Fargo.S02"}]})
    assert text.splitlines() == [
        "tvdb:269613  Fargo (2014)  [series]",
        "  folder: /srv/media/series/Fargo (2014) [tvdbid-269613]",
        "  season 01: episodes 1",
        "  season 02: episodes 1-3, 5",
        "  download 01jf  done  Fargo.S02",
    ]


def test_episode_ranges() -> None:
    assert _ranges([3, 1, 2, 2, 7]) == "1-3, 7"
    assert _ranges([]) == "-"
