"""`jellybit parse`: names from arguments or stdin, one JSON object per line, keys in the documented order."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from jellybit.cli.parse import KEYS, run


def lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_names_as_arguments() -> None:
    out = io.StringIO()
    names = ["Фарго / Fargo (2014) S01 WEB-DL 1080p", "[SubsPlease] One Piece - 1071 (1080p)"]
    code = run(names, io.StringIO(), out)
    assert code == 0
    fargo, piece = lines(out.getvalue())
    assert list(fargo)[: len(KEYS)] == list(KEYS)
    assert {k: fargo[k] for k in KEYS} == {
        "name": "Фарго / Fargo (2014) S01 WEB-DL 1080p", "media_type": "season_pack", "title": "Fargo",
        "year": 2014, "season": 1, "episodes": [], "absolute_episodes": [], "air_date": None,
    }
    assert fargo["alternative_titles"] == ["Фарго"]
    assert piece["absolute_episodes"] == [1071]
    assert piece["episodes"] == []


def test_names_from_stdin_one_per_line_blank_lines_skipped() -> None:
    out = io.StringIO()
    stdin = io.StringIO("Show.S01E01-E03.mkv\r\n\n   \nThe.Daily.Show.2024.03.15.720p\n"
                        "Blade.Runner.2049.1080p\n")
    assert run([], stdin, out) == 0
    first, daily, film = lines(out.getvalue())
    assert (first["season"], first["episodes"], first["media_type"]) == (1, [1, 2, 3], "episode")
    assert (daily["air_date"], daily["media_type"]) == ("2024-03-15", "episode")
    assert (film["title"], film["year"], film["media_type"]) == ("Blade Runner 2049", None, "movie")


def test_a_name_or_a_path_reads_a_slash_as_the_title_or_a_folder() -> None:
    for path, title in ((False, "Fate/stay night"), (True, "stay night"), (None, "stay night")):
        out = io.StringIO()
        assert run(["Fate/stay night - 01"], io.StringIO(), out, path=path) == 0
        assert lines(out.getvalue())[0]["title"] == title
    out = io.StringIO()
    run(["Show.S01E01E03.720p"], io.StringIO(), out)
    assert lines(out.getvalue())[0]["ambiguous_episodes"] == [1, 2, 3]


def test_output_is_deterministic_and_never_fails_on_garbage() -> None:
    names = ["", "\x00\x01", "[[[[", "x" * 4096, "../../../etc/passwd", "Сериал 1 сезон", "第01集"]
    outputs = []
    for _ in range(2):
        out = io.StringIO()
        assert run(names, io.StringIO(), out) == 0
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]
    parsed = lines(outputs[0])
    assert [p["name"] for p in parsed] == names
    assert all(p["media_type"] in (None, "movie", "episode", "season_pack") for p in parsed)


def _console_script() -> Path | None:
    beside = Path(sys.executable).with_name("jellybit")
    if beside.exists():
        return beside
    found = shutil.which("jellybit")
    return Path(found) if found else None


def test_the_installed_console_script() -> None:
    script = _console_script()
    assert script is not None, "the `jellybit` console script is not installed in this environment"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JELLYBIT_")}
    args = [str(script), "parse", "Breaking.Bad.S01E01.720p.BluRay.x264", "2001 A Space Odyssey (1968)"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    episode, film = lines(done.stdout)
    assert (episode["title"], episode["season"], episode["episodes"]) == ("Breaking Bad", 1, [1])
    assert (film["title"], film["year"], film["media_type"]) == ("2001 A Space Odyssey", 1968, "movie")
    piped = subprocess.run([str(script), "parse"], input="Фарго (Fargo) 2014 1 сезон\n", capture_output=True,
                           text=True, env=env, timeout=60, check=False)
    assert piped.returncode == 0, piped.stderr
    assert lines(piped.stdout)[0]["title"] == "Fargo"
    named = subprocess.run([str(script), "parse", "--name", "Fate/stay night - 01"], capture_output=True,
                           text=True, env=env, timeout=60, check=False)
    assert named.returncode == 0, named.stderr
    assert lines(named.stdout)[0]["title"] == "Fate/stay night"
