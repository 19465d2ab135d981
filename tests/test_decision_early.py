"""Recognized while it downloads (issue 25.1): the review is asked before the bytes are there, a
decision taken then is kept and applied when the files complete, and what the completed files
change is a new, explained review.

Real worker, qbittorrent-nox and mosquitto; TMDB/TVDB/TVMaze and the LLM are the local fakes
(`tests/support/decisions.py`). A download is held back by moving its files away before qBittorrent
gets the .torrent: qBittorrent then has the file list and none (or some) of the bytes, a paused
download in all but name; moving them back and asking qBittorrent to check the torrent again
completes it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jellybit.core.models import Download
from jellybit.core.states import State
from jellybit.protocol import Command, Topics
from tests.support.decisions import Case, DecisionStack
from tests.support.qbittorrent import SeededTorrent, seeded_torrent
from tests.test_decision_rules import ENGLISH, movie_answer, season, series_answer_without_year

pytestmark = pytest.mark.parametrize("decisions", ["llm", "none"], indirect=True)

SHAMELESS_US = "series/Shameless (US) (2011) [tvdbid-161511]"
MATRIX = "movies/The Matrix (1999) [tmdbid-603]"


@dataclass
class Held:
    """A download whose files are (partly) away from qBittorrent's save path."""

    download_id: str
    seeded: SeededTorrent
    away: Path
    files: list[str]


async def hold(stack: DecisionStack, case: Case, *, keep: tuple[str, ...] = ()) -> Held:
    """Add a case over MQTT, its files moved away (but `keep`): qBittorrent lists them, lacks the bytes."""
    if case.answer is not None:
        stack.answers[case.name] = case.answer
    seeded = seeded_torrent(stack.qbittorrent.data_dir, case.name, dict(case.files), seed=case.seed)
    away = stack.qbittorrent.data_dir / f".away-{case.name}"
    moved = []
    for relative in case.files:
        if relative not in keep:
            (away / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(seeded.content / relative, away / relative)
            moved.append(relative)
    response = await stack.client.request(Command.ADD, {
        "torrent": base64.b64encode(seeded.torrent).decode(), "context": case.context})
    assert response.status == "ok", response.error
    return Held(str(response.data.id), seeded, away, moved)


def arrive(stack: DecisionStack, held: Held) -> None:
    """The bytes arrive: the files go back and qBittorrent checks the torrent again."""
    for relative in held.files:
        (held.seeded.content / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(held.away / relative, held.seeded.content / relative)
    with stack.qbittorrent.process.admin() as admin:
        admin.post("torrents/recheck", data={"hashes": held.seeded.infohash_v1}).raise_for_status()


async def until(probe: Callable[[], Awaitable[Any]], what: str, within: float = 60.0) -> Any:
    """Await `probe()` until it is truthy; fail with `what` at the deadline."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        value = await probe()
        if value:
            return value
        assert asyncio.get_running_loop().time() < deadline, what
        await asyncio.sleep(0.05)


async def waiting_in(stack: DecisionStack, download_id: str, state: State) -> Download:
    """The download once it rests in `state` while its files still download."""
    async def probe() -> Download | None:
        download = await stack.app.store.get_download(download_id)
        settled = download.state is state and not stack.app.worker.serial.busy(download_id)
        return download if settled and download.awaiting_files else None
    return await until(probe, f"never in {state} while downloading")


async def reviews(stack: DecisionStack, download_id: str) -> int:
    """How many times the download was sent to review."""
    return sum(1 for t in await stack.app.store.transitions(download_id) if t.to_state is State.REVIEW)


def shameless(name: str) -> Case:
    """Two episodes of season 3 of `Shameless`, which exists as a US and a UK show: a human decides."""
    quality = name.split(".S03.", 1)[1]
    files: dict[str, int | bytes] = {f"Shameless.S03E{e:02d}.{quality}.mkv": 30_000 + e for e in (1, 2)}
    return Case(name, files, answer=series_answer_without_year("Shameless"))


async def test_a_review_is_asked_while_it_downloads_and_its_apply_is_kept(decisions: DecisionStack) -> None:
    topics = Topics(decisions.app.config.mqtt.base_topic)
    events = decisions.client.watch(topics.events)
    listening = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0.2)       # subscribed before the download is added
    held = await hold(decisions, shameless("Shameless.S03.1080p.WEB-DL"),
                      keep=("Shameless.S03E01.1080p.WEB-DL.mkv",))
    download = await waiting_in(decisions, held.download_id, State.REVIEW)
    assert 0 < download.progress < 1
    summary = await decisions.app.commands.summary()
    assert (summary.in_review, summary.downloading) == (1, 1)     # in review, and still downloading

    # The ping says how far the download is: the event and the retained review carry the progress.
    ping: dict[str, Any] = {}
    while ping.get("event_type") != "review_requested":
        ping = json.loads((await asyncio.wait_for(listening, 30))[1])
        listening = asyncio.ensure_future(anext(events))
    listening.cancel()
    assert ping["id"] == held.download_id
    assert 0 < ping["progress"] < 1, ping
    detail = await decisions.get(held.download_id)
    assert detail["download"]["awaiting_files"] is True
    codes = [r["code"] for r in detail["recognition"]["reasons"]]
    assert "small_margin" in codes, codes
    assert "files_pending" in codes, codes
    us = next(c for c in detail["recognition"]["candidates"]
              if c["provider"] == "tvdb" and c["provider_id"] == "161511")

    answer = await decisions.client.request(Command.APPLY, {"id": held.download_id, "candidate_id": us["id"]})
    assert answer.status == "ok", answer.error
    await waiting_in(decisions, held.download_id, State.APPLYING)
    assert decisions.tree() == []                        # nothing is laid out before the bytes are there

    arrive(decisions, held)
    outcome = await decisions.settle(held.download_id, applied=True)
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == [f"{SHAMELESS_US}/Season 03/Shameless (US) S03E01.mkv",
                                f"{SHAMELESS_US}/Season 03/Shameless (US) S03E02.mkv"]
    assert await reviews(decisions, held.download_id) == 1        # no second question
    done = await decisions.app.store.get_download(held.download_id)
    assert not done.awaiting_files
    assert done.completed_at is not None


async def test_a_sure_download_waits_for_its_files_then_their_text_tags_the_subtitle(
        decisions: DecisionStack) -> None:
    name = "The.Matrix.1999.1080p.BluRay.x264-GRP"
    cues = "".join(f"{n}\n00:00:{n:02d},000 --> 00:00:{n:02d},900\n{line}\n\n"
                   for n, line in enumerate(ENGLISH, 1))
    held = await hold(decisions, Case(name, {f"{name}.mkv": 90_000, f"{name}.srt": cues.encode()},
                                      answer=movie_answer("The Matrix", 1999)))
    await waiting_in(decisions, held.download_id, State.APPLYING)
    early = await decisions.app.store.current_recognition(held.download_id)
    assert early is not None
    assert early.provider_id == "603"
    subtitle = next(i for i in early.plan.items if i.source.endswith(".srt"))
    assert subtitle.language is None
    assert "still downloading" in (subtitle.note or ""), subtitle
    assert decisions.tree() == []

    arrive(decisions, held)
    outcome = await decisions.settle(held.download_id)
    assert outcome.state is State.DONE, outcome.reasons
    # The text, read once the file is complete, tells its language: no question for that.
    assert decisions.tree() == [f"{MATRIX}/The Matrix (1999) [tmdbid-603].en.srt",
                                f"{MATRIX}/The Matrix (1999) [tmdbid-603].mkv"]
    assert await reviews(decisions, held.download_id) == 0


async def test_refine_and_reject_while_it_downloads(decisions: DecisionStack) -> None:
    refined = await hold(decisions, shameless("Shameless.S03.720p.HDTV"))
    rejected = await hold(decisions, Case("Shameless.S03.480p.DVDRip", {
        f"Shameless.S03E{e:02d}.480p.DVDRip.mkv": 20_000 + e for e in (1, 2)}, seed=3,
        answer=series_answer_without_year("Shameless")))
    await waiting_in(decisions, refined.download_id, State.REVIEW)
    await waiting_in(decisions, rejected.download_id, State.REVIEW)

    answer = await decisions.client.request(Command.REFINE, {"id": refined.download_id,
                                                              "hint": "the American version"})
    assert answer.status == "ok", answer.error
    answer = await decisions.client.request(Command.REJECT, {"id": rejected.download_id, "reason": "wrong"})
    assert answer.status == "ok", answer.error
    # The hint settles it: decided, and waiting for the files.
    await waiting_in(decisions, refined.download_id, State.APPLYING)
    assert (await decisions.app.store.get_download(rejected.download_id)).state is State.CANCELLED

    arrive(decisions, refined)
    arrive(decisions, rejected)
    outcome = await decisions.settle(refined.download_id, decided=True)
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == [f"{SHAMELESS_US}/Season 03/Shameless (US) S03E01.mkv",
                                f"{SHAMELESS_US}/Season 03/Shameless (US) S03E02.mkv"]
    assert await reviews(decisions, refined.download_id) == 1
    await asyncio.sleep(1.0)     # not a wait for anything: a rejected download stays as it is
    assert (await decisions.app.store.get_download(rejected.download_id)).state is State.CANCELLED


async def test_a_file_deselected_after_the_decision_is_a_new_explained_review(
        decisions: DecisionStack) -> None:
    case = season("Fargo.S01.1080p.WEB-DL", 1, 3)
    held = await hold(decisions, case)
    await waiting_in(decisions, held.download_id, State.APPLYING)     # sure of it: decided at once

    third = "Fargo.S01E03.1080p.WEB-DL.mkv"
    with decisions.qbittorrent.process.admin() as admin:
        files = admin.get("torrents/files", params={"hash": held.seeded.infohash_v1}).json()
        index = next(i for i, f in enumerate(files) if f["name"].endswith(third))
        admin.post("torrents/filePrio", data={"hash": held.seeded.infohash_v1, "id": str(index),
                                               "priority": "0"}).raise_for_status()
    # Its bytes arrive too (a piece it shares with the second episode must), but it is not wanted.
    arrive(decisions, held)
    outcome = await decisions.settle(held.download_id, decided=True)
    assert outcome.state is State.REVIEW, outcome.reasons
    changed = next(r for r in outcome.reasons if r.startswith("content_changed"))
    assert "after the files completed" in changed, changed
    assert third in changed, changed
    history = await decisions.app.store.transitions(held.download_id)
    last = history[-1]
    assert (last.from_state, last.to_state) == (State.APPLYING, State.REVIEW)
    assert "the completed files changed the decision" in last.reason
    assert not any(path.endswith("S01E03.mkv") for path in decisions.tree())
    assert "no longer part of the download" in changed
