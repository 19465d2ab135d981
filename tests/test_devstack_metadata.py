"""The local stack's first start: TVMaze on, TMDB/TVDB keys from the environment or a terminal prompt."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from devstack.metadata import PROMPTS, metadata_keys, metadata_toml
from devstack.stack import StackPaths, config_text, prepare
from hypothesis import given
from hypothesis import strategies as st

from jellybit.config import load_config, parse_config
from tests import SCRIPTS
from tests.support.services import free_port
from tests.support.worker_process import process_env

TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJ0ZXN0In0.c2lnbmF0dXJl"


def ports_env() -> dict[str, str]:
    return {f"JELLYBIT_LOCAL_{name}_PORT": str(free_port()) for name in ("MQTT", "QBITTORRENT", "TORRENT",
                                                                           "PANEL")}


def test_a_first_start_turns_tvmaze_on_and_takes_keys_from_the_environment(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path / "local")
    env = {**ports_env(), "JELLYBIT_METADATA_TMDB_API_KEY": TOKEN, "JELLYBIT_METADATA_TVDB_API_KEY": "tv-key",
           "JELLYBIT_METADATA_TVDB_PIN": "4321"}
    prepare(paths, env)
    config = load_config(paths.config, env={})                     # the keys are in the file itself
    metadata = config.metadata
    assert (metadata.tvmaze.enabled, metadata.tmdb.enabled, metadata.tvdb.enabled) == (True, True, True)
    assert metadata.tmdb.api_key is not None
    assert metadata.tmdb.api_key.get_secret_value() == TOKEN
    assert metadata.tvdb.pin is not None
    assert metadata.tvdb.pin.get_secret_value() == "4321"
    assert paths.config.stat().st_mode & 0o777 == 0o600


def test_without_keys_only_tvmaze_is_on_and_the_config_says_how_to_add_them(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path / "local")
    prepare(paths, ports_env())
    config = load_config(paths.config, env={})
    assert (config.metadata.tvmaze.enabled, config.metadata.tmdb.enabled) == (True, False)
    assert "Without a key TMDB and TVDB stay off" in paths.config.read_text()


def test_tvmaze_can_be_left_off(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path / "local")
    prepare(paths, {**ports_env(), "JELLYBIT_LOCAL_TVMAZE": "0"})
    assert not load_config(paths.config, env={}).metadata.tvmaze.enabled


def test_keys_are_asked_for_only_when_the_environment_lacks_them() -> None:
    asked: list[str] = []
    answers = {PROMPTS["tmdb"]: "  tmdb-key\n", PROMPTS["tvdb"]: "tvdb-key\n", PROMPTS["pin"]: "\n"}

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return answers[prompt]

    assert metadata_keys({}, ask) == {"tmdb": "tmdb-key", "tvdb": "tvdb-key"}
    assert asked == [PROMPTS["tmdb"], PROMPTS["tvdb"], PROMPTS["pin"]]
    asked.clear()
    from_env = metadata_keys({"JELLYBIT_METADATA_TMDB_API_KEY": "env"}, ask)
    assert from_env == {"tmdb": "env", "tvdb": "tvdb-key"}
    assert asked == [PROMPTS["tvdb"], PROMPTS["pin"]]
    assert metadata_keys({}, None) == {}


def test_a_second_start_asks_nothing(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path / "local")
    env = ports_env()
    prepare(paths, env)
    text = paths.config.read_text()

    def refuse(prompt: str) -> str:
        raise AssertionError(f"asked {prompt!r} on a second start")

    prepare(paths, env, refuse)
    assert paths.config.read_text() == text


@given(st.text(max_size=60), st.text(max_size=60), st.booleans())
def test_any_key_round_trips_through_the_generated_toml(tmdb: str, tvdb: str, tvmaze: bool) -> None:
    keys = metadata_keys({"JELLYBIT_METADATA_TMDB_API_KEY": tmdb, "JELLYBIT_METADATA_TVDB_API_KEY": tvdb})
    ports = {"mqtt": 1, "qbittorrent": 2, "torrent": 3, "panel": 4}
    text = config_text(StackPaths(Path("/x")), ports, "pw", metadata_toml(keys, tvmaze=tvmaze))
    config = parse_config(text, env={})
    assert config.metadata.tvmaze.enabled is tvmaze
    assert config.metadata.tmdb.enabled is ("tmdb" in keys)
    if "tmdb" in keys:
        assert config.metadata.tmdb.api_key is not None
        assert config.metadata.tmdb.api_key.get_secret_value() == keys["tmdb"]


def _read_until(fd: int, needle: bytes, timeout: float = 30.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        assert time.monotonic() < deadline, seen
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    return seen


def test_in_a_terminal_the_keys_are_asked_for_without_echo(tmp_path: Path) -> None:
    """`python -m devstack prepare` on a real pseudo-terminal, as scripts/run-local runs it."""
    paths = StackPaths(tmp_path / "local")
    master, slave = os.openpty()
    env = process_env(**ports_env())
    for name in list(env):
        if name.startswith("JELLYBIT_METADATA_"):
            env.pop(name)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [SCRIPTS, env.get("PYTHONPATH")]))
    proc = subprocess.Popen([sys.executable, "-m", "devstack", "prepare", "--dir", str(paths.root)],
                            stdin=slave, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    try:
        _read_until(master, b"TMDB API key")
        os.write(master, b"secret-tmdb-key\n")
        typed = _read_until(master, b"TVDB API key")
        os.write(master, b"\n")
        out, _ = proc.communicate(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert b"secret-tmdb-key" not in typed                        # not echoed on the terminal
    assert b"JB_CONFIG=" in out
    config = load_config(paths.config, env={})
    assert config.metadata.tmdb.api_key is not None
    assert config.metadata.tmdb.api_key.get_secret_value() == "secret-tmdb-key"
    assert not config.metadata.tvdb.enabled
