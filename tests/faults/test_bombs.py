"""Hostile `.torrent` files at once against a real worker process on a real mosquitto: every one gets
an error answer in words (its memory budget, or `busy` while another is read), nothing is added,
another client is answered meanwhile, and nothing is logged as a traceback. The memory figures
(the worker's own peak, and with its parsing children) are measured by `bench/bombs.py`."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import bencode2

from jellybit.client import JellybitClient
from jellybit.config import load_config
from jellybit.protocol import Command, Topics
from tests.support.mosquitto import Broker
from tests.support.worker_process import WorkerProcess, eventually_retained, requests_at_once, worker_config

BOMBS = 8


def bomb(n: int, containers: int = 1_500_000) -> bytes:
    """A valid torrent plus a key holding empty lists: 3 MB in the file, ~100 MiB once decoded."""
    info = {b"name": f"Bomb.{n}".encode(), b"piece length": 65536, b"length": 1000, b"pieces": b"\0" * 20}
    return bencode2.bencode({b"info": info})[:-1] + b"2:zzl" + b"le" * containers + b"ee"


async def test_bencode_bombs_at_once_are_refused_in_words_and_change_nothing(tmp_path: Path,
                                                                            mosquitto: Broker) -> None:
    config_file = worker_config(tmp_path, mqtt_url=mosquitto.url)
    text = config_file.read_text(encoding="utf-8")
    limits = "[worker]\nparse_memory_mib = 32\nparse_timeout = 120\n"
    config_file.write_text(text.replace("[worker]\n", limits), encoding="utf-8")
    config = load_config(config_file)
    topics = Topics(config.mqtt.base_topic)
    worker = WorkerProcess(config_file, tmp_path / "worker.log")
    worker.start()
    try:
        await eventually_retained(mosquitto.url, topics.availability, lambda p: p == b"online")
        payloads = [json.dumps({"torrent": base64.b64encode(bomb(n)).decode()}).encode()
                    for n in range(BOMBS)]
        async with JellybitClient(config.mqtt, name="bystander") as bystander:
            flood = asyncio.create_task(requests_at_once(mosquitto.port, topics, Command.ADD, payloads))
            await asyncio.sleep(0.5)
            meanwhile = await bystander.request(Command.LIST, {}, timeout=30)
            answers = await flood
            assert meanwhile.status == "ok"

            assert all(a["status"] == "error" for a in answers), answers
            codes = {a["error"]["code"] for a in answers}
            assert codes <= {"invalid_source", "busy"}, answers
            read = [a["error"]["message"] for a in answers if a["error"]["code"] == "invalid_source"]
            assert read, "no bomb was read at all"
            assert all("needs more than 32 MiB of memory" in m for m in read), read
            busy = [a["error"]["message"] for a in answers if a["error"]["code"] == "busy"]
            assert all("try again in a moment" in m for m in busy), busy

            # Sent again alone, a bomb is read (not busy) and refused the same way.
            (again,) = await requests_at_once(mosquitto.port, topics, Command.ADD, payloads[:1])
            assert again["error"]["code"] == "invalid_source"
            listed = await bystander.request(Command.LIST, {})
            assert listed.data.total == 0
        assert worker.alive
        assert "Traceback" not in worker.output()
    finally:
        worker.close()
