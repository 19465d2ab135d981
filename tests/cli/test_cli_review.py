"""The CLI as a review tool: `add --wait` that ends in review says why and what to run; `show` prints the
verdict, reasons, numbered candidates, the plan and, once done, the library files; `apply --candidate N`.
A real worker process, real qBittorrent, the fake TMDB; and where the CLI finds its configuration."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from jellybit.cli.local import EXIT_NO_ANSWER, LOCAL_CONFIG, find_config
from tests.support.fake_metadata import Catalogue, FakeTitle, FakeTmdb
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent, wait_for
from tests.support.services import free_port
from tests.support.worker_process import CLI, WorkerProcess, process_env, run_cli, tmdb_worker

NAME = "The.Matrix.1080p.BluRay.x264"


@pytest.fixture
def reviewer(tmp_path: Path, mosquitto: Broker, qbittorrent: QbittorrentInstance, fake_catalogue: Catalogue,
             fake_tmdb: FakeTmdb) -> Iterator[tuple[WorkerProcess, Path]]:
    """A worker whose qBittorrent has the files and whose TMDB knows two films called The Matrix (and a
    sequel), so a name without a year needs a human."""
    fake_catalogue.add(FakeTitle("movie", "The Matrix", 2031, tmdb_id=9603, slug="the-matrix-2031",
                                 overview="A remake.", network="Remake Pictures", country="GB"))
    with tmdb_worker(tmp_path, mosquitto.url, qbittorrent, fake_tmdb) as started:
        yield started


def test_add_wait_ends_in_review_with_the_reasons_and_the_commands_to_decide(
        reviewer: tuple[WorkerProcess, Path]) -> None:
    worker, root = reviewer
    seeded = seeded_torrent(root / "downloads", NAME, {f"{NAME}.mkv": 120_000})
    torrent = root / "matrix.torrent"
    torrent.write_bytes(seeded.torrent)
    added = run_cli(worker.config, "add", "--torrent", str(torrent), "--wait", "--wait-timeout", "60")
    assert added.returncode == 0, added.stderr
    ident = added.stdout.split()[0]
    out = added.stdout
    # every face's verdict: the kind of doubt in general (jellybit.present)
    assert "Needs your decision: The runner-up is nearly as good as the best candidate" in out
    assert ("[blocks] TMDB's best match 'The Matrix' (1999, US, Warner Bros. Pictures) is only 0.00 ahead of "
            "'The Matrix' (2031, GB, Remake Pictures)" in out)
    assert "Candidates (apply one with --candidate N):" in out
    assert "  1. The Matrix · 1999 · film · US · Warner Bros. Pictures [recommended]" in out
    assert "  2. The Matrix · 2031 · film · GB · Remake Pictures" in out
    assert "  3. The Matrix Reloaded · 2003 · film · US · Warner Bros. Pictures" in out
    # The apply line names the candidates its numbers stand for.
    assert (f"jellybit apply {ident} --candidate N     # lay it out as candidate N: 1 = The Matrix (1999); "
            "2 = The Matrix (2031); 3 = The Matrix Reloaded (2003)") in out
    assert f"jellybit reject {ident}" in out
    assert f"jellybit defer {ident}" in out          # what the state allows, as the engine's table says

    shown = run_cli(worker.config, "show", ident)
    assert shown.returncode == 0, shown.stderr
    assert "Plan (source → target):" in shown.stdout
    assert (f"{NAME}.mkv → movies/The Matrix (1999) [tmdbid-603]/The Matrix (1999) [tmdbid-603].mkv"
            in shown.stdout), shown.stdout
    assert "     TMDB: https://www.themoviedb.org/movie/603" in shown.stdout

    chosen = run_cli(worker.config, "apply", ident, "--candidate", "3")
    assert chosen.returncode == 0, chosen.stderr

    def done() -> bool:
        listed = run_cli(worker.config, "show", ident, "--json")
        return json.loads(listed.stdout)["data"]["download"]["state"] == "done"

    wait_for(done, timeout=30)
    after = run_cli(worker.config, "show", ident).stdout
    assert "Laid out as you decided: The Matrix Reloaded (2003)" in after
    assert "In the library:" in after
    assert "  TMDB: https://www.themoviedb.org/movie/604" in after     # the work it was laid out as
    assert "The Matrix Reloaded (2003) [tmdbid-604]/The Matrix Reloaded (2003) [tmdbid-604].mkv" in after
    assert "Why:" not in after      # the doubts of review are over
    assert "blocks" not in after
    assert f"jellybit undo {ident}" in after
    missing = run_cli(worker.config, "apply", ident, "--candidate", "7")
    assert missing.returncode != 0


def run_here(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it in a folder, without --config or JELLYBIT_CONFIG."""
    environ = {k: v for k, v in process_env().items() if not k.startswith("JELLYBIT_")}
    environ.update(env or {})
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=environ, cwd=cwd, timeout=60,
                          check=False, stdin=subprocess.DEVNULL)


def test_the_local_stack_config_is_found_and_a_failure_says_where_to_point(tmp_path: Path) -> None:
    closed = f"mqtt://127.0.0.1:{free_port()}"
    repo = tmp_path / "repo"
    (repo / LOCAL_CONFIG).parent.mkdir(parents=True)
    (repo / LOCAL_CONFIG).write_text(f'[mqtt]\nurl = "{closed}"\n', encoding="utf-8")
    found = run_here(repo, "list", "--timeout", "2")
    assert found.returncode == EXIT_NO_ANSWER
    assert f"{repo / LOCAL_CONFIG} (the local stack of scripts/run-local)" in found.stderr
    assert closed in found.stderr
    checked = run_here(repo, "check-config", "--json")
    assert json.loads(checked.stdout)["file"].startswith(str(repo / LOCAL_CONFIG))

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    lost = run_here(elsewhere, "list", "--timeout", "2", env={"NO_PROXY": "*"})
    assert lost.returncode == EXIT_NO_ANSWER
    assert "the built-in defaults" in lost.stderr
    assert "var/local/jellybit.toml" in lost.stderr
    assert "--config FILE or JELLYBIT_CONFIG=FILE" in lost.stderr


def test_config_precedence(tmp_path: Path) -> None:
    local = tmp_path / "stack"
    local.mkdir()
    (local / "jellybit.toml").write_text("", encoding="utf-8")
    assert find_config("given.toml", {}, tmp_path) == ("given.toml", "--config given.toml")
    assert find_config(None, {"JELLYBIT_CONFIG": "env.toml"}, tmp_path)[0] == "env.toml"
    assert find_config(None, {"JELLYBIT_LOCAL_DIR": str(local)}, tmp_path)[0] == str(local / "jellybit.toml")
    assert find_config(None, {}, tmp_path)[0] is None
    (tmp_path / LOCAL_CONFIG).parent.mkdir(parents=True)
    (tmp_path / LOCAL_CONFIG).write_text("", encoding="utf-8")
    assert find_config(None, {}, tmp_path)[0] == str(tmp_path / LOCAL_CONFIG)
