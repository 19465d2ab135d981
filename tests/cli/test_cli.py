"""The `jellybit` console script, run as a user runs it (a real subprocess, real files)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from jellybit.adapters.store import load_migrations
from jellybit.cli import local as cli


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m jellybit ARGS` with a clean JELLYBIT_CONFIG."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JELLYBIT_")}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "jellybit", *args],
        capture_output=True, text=True, env=environ, timeout=60, check=False,
    )


def write_config(tmp_path: Path, body: str = "") -> Path:
    path = tmp_path / "jellybit.toml"
    path.write_text(f'[storage]\ndatabase = "{tmp_path / "db" / "jellybit.db"}"\n{body}', encoding="utf-8")
    return path


def test_migrate_creates_the_database_once(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    first = run_cli("--config", str(config), "migrate", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["applied"] == [m.version for m in load_migrations()]
    second = run_cli("--config", str(config), "migrate", "--json")
    assert json.loads(second.stdout)["applied"] == []
    with sqlite3.connect(tmp_path / "db" / "jellybit.db") as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"download", "download_infohash", "file_link", "state_transition"} <= tables


def test_config_from_environment_variable(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    result = run_cli("check-config", "--json", env={"JELLYBIT_CONFIG": str(config)})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["database"] == str(tmp_path / "db" / "jellybit.db")


def test_bad_config_names_key_and_file(tmp_path: Path) -> None:
    config = write_config(tmp_path, '[worker]\npoll_interval = "often"\nbogus = 1\n')
    result = run_cli("--config", str(config), "check-config")
    assert result.returncode == cli.EXIT_CONFIG
    assert str(config) in result.stderr
    assert "worker.poll_interval" in result.stderr
    assert "worker.bogus: unknown key" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    result = run_cli("--config", str(tmp_path / "nope.toml"), "check-config")
    assert result.returncode == cli.EXIT_CONFIG
    assert "cannot read configuration file" in result.stderr


def test_example_config_is_valid() -> None:
    example = Path(__file__).resolve().parents[2] / "config.example.toml"
    if not example.exists():
        pytest.fail("config.example.toml is missing")
    result = run_cli("--config", str(example), "check-config", "--json")
    assert result.returncode == 0, result.stderr


def test_unknown_command_is_a_usage_error() -> None:
    result = run_cli("frobnicate")
    assert result.returncode == cli.EXIT_USAGE


def test_add_with_a_torrent_file_that_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, '[mqtt]\nurl = "mqtt://127.0.0.1:9"\n')
    missing = tmp_path / "Фарго.torrent"
    result = run_cli("--config", str(config), "add", "--torrent", str(missing))
    assert result.returncode == cli.EXIT_USAGE
    assert f"cannot read {missing}: No such file or directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_confirmation_error_names_the_cli_flag(capsys: pytest.CaptureFixture[str]) -> None:
    from jellybit.cli.remote import _print_response
    from jellybit.protocol import ErrorBody, Response

    args = cli.build_parser().parse_args(["cancel", "01jf", "--delete-data"])
    answer = Response(status="error", error=ErrorBody(code="confirmation_required",
                                                      message="send confirm: true to do it"))
    assert _print_response(answer, "cancel", args, sys.stdout) == cli.EXIT_ERROR
    assert "run it again with --yes to confirm" in capsys.readouterr().err
