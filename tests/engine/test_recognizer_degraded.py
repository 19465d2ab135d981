"""A configured LLM that is down, slow or talking nonsense is never worse than no LLM at all.

The real recognizer, the real OpenAI client against the fake server, the real providers against
the local TMDB/TVDB/TVMaze fakes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from jellybit.adapters.llm import OpenAiLlm
from jellybit.config import LlmConfig
from jellybit.core.records import RecognitionDraft
from tests.engine.test_recognizer import GB, MATRIX, SEASON2, codes, recognizer, request
from tests.support.fake_http import Reply
from tests.support.fake_metadata import FakeTitle, FakeTmdb, FakeTvdb, FakeTvmaze
from tests.support.fake_openai import FakeOpenAI, file_entry, llm_answer


@pytest.fixture
async def slow_llm(fake_openai: FakeOpenAI) -> AsyncIterator[OpenAiLlm]:
    """The real client with a short timeout, for a server that does not answer in time."""
    client = OpenAiLlm(LlmConfig(enabled=True, base_url=fake_openai.base_url, model="m", timeout=0.5),
                       max_retries=0)
    yield client
    await client.close()


def same_decision(a: RecognitionDraft, b: RecognitionDraft) -> None:
    assert (a.automatic, a.provider, a.provider_id, a.media_type) == (b.automatic, b.provider, b.provider_id,
                                                                      b.media_type)
    assert (a.confidence, a.recommendation) == (b.confidence, b.recommendation)
    assert [(i.source, i.role, i.season, i.episodes) for i in a.plan.items] == [
        (i.source, i.role, i.season, i.episodes) for i in b.plan.items]


CASES = {
    "season": ("Fargo.S02.1080p.WEB-DL", SEASON2),
    "movie": (MATRIX, [(f"{MATRIX}/{MATRIX}.mkv", GB)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("failure", ["unreachable", "http_500", "not_json", "wrong_schema", "timeout"])
async def test_every_llm_failure_decides_like_no_llm(
    case: str, failure: str, llm: OpenAiLlm, slow_llm: OpenAiLlm, providers: list[Any],
    fake_openai: FakeOpenAI,
) -> None:
    name, files = CASES[case]
    client = llm
    if failure == "unreachable":
        client = OpenAiLlm(LlmConfig(enabled=True, base_url="http://127.0.0.1:9/v1", model="m", timeout=2),
                           max_retries=0)
    elif failure == "http_500":
        fake_openai.fail(500, "model crashed")
    elif failure == "not_json":
        fake_openai.reply("Sure! It is Fargo, season two. Enjoy!")
    elif failure == "wrong_schema":
        fake_openai.reply({"kind": "tv", "name": ["Fargo"], "files": "all of them"})
    else:
        fake_openai.hang(5.0)
        client = slow_llm
    try:
        degraded = await recognizer(client, providers).recognize(request(name, files))
    finally:
        if failure == "unreachable":
            await client.close()
    without = await recognizer(None, providers).recognize(request(name, files))
    assert degraded.automatic, degraded.reasons
    same_decision(degraded, without)
    note = next(r for r in degraded.reasons if r.code == "llm_unavailable")
    assert not note.blocking
    assert note.weight == 0
    assert "recognized from the names and metadata alone" in note.message


async def test_an_alias_of_the_match_is_agreement_not_a_disagreement(
    llm: OpenAiLlm, providers: list[Any], fake_openai: FakeOpenAI, fake_tmdb: FakeTmdb, fake_tvdb: FakeTvdb,
    fake_tvmaze: FakeTvmaze,
) -> None:
    fake_tmdb.catalogue.add(FakeTitle(
        "series", "Attack on Titan", 2013, original_title="進撃の巨人", original_language="ja",
        aliases=["Shingeki no Kyojin"], seasons={1: 25, 2: 12}, tmdb_id=1429, tvdb_id=267440,
        tvmaze_id=919, slug="attack-on-titan"))
    name = "Shingeki.no.Kyojin.S01.1080p.BluRay"
    files = [(f"{name}/Shingeki.no.Kyojin.S01E{n:02d}.1080p.mkv", GB) for n in (1, 2)]
    fake_openai.reply(llm_answer("series", "Attack on Titan", 2013, [
        file_entry(f"f{n}", "video", season=1, episodes=[n]) for n in (1, 2)]))
    draft = await recognizer(llm, providers).recognize(request(name, files))
    assert "llm_title" not in codes(draft)
    assert draft.automatic, draft.reasons
    assert draft.title == "Attack on Titan"


async def test_a_real_disagreement_on_the_title_still_counts(
    llm: OpenAiLlm, providers: list[Any], fake_openai: FakeOpenAI
) -> None:
    fake_openai.reply(llm_answer("series", "Sherlock", 2010, [
        file_entry(f"f{n}", "video", season=2, episodes=[n]) for n in range(1, 11)]))
    draft = await recognizer(llm, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2))
    assert "llm_title" in codes(draft)
    assert not draft.automatic


async def test_a_metadata_outage_blocks_and_says_it_is_retried(
    providers: list[Any], fake_tmdb: FakeTmdb, fake_tvdb: FakeTvdb, fake_tvmaze: FakeTvmaze
) -> None:
    for fake in (fake_tmdb, fake_tvdb, fake_tvmaze):
        fake.outage = Reply(503, {"message": "down"})
    draft = await recognizer(None, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2))
    outage = next(r for r in draft.reasons if r.code == "provider_unavailable")
    assert outage.blocking
    assert not draft.automatic
    assert "tries again by itself" in outage.message
    assert "no_candidate" not in codes(draft)          # nobody said "no match": nobody was asked


async def test_no_match_names_only_the_providers_that_answered(
    providers: list[Any], fake_tmdb: FakeTmdb
) -> None:
    fake_tmdb.outage = Reply(503, {"message": "down"})
    draft = await recognizer(None, providers).recognize(request(
        "Completely.Unknown.Show.S01E01.mkv", [("Completely.Unknown.Show.S01E01.mkv", GB)]))
    missing = next(r for r in draft.reasons if r.code == "no_candidate")
    assert missing.message.endswith("on TVDB, TVMaze")
    assert {"provider_unavailable", "no_candidate"} <= {r.code for r in draft.reasons if r.blocking}


async def test_one_provider_down_does_not_matter_when_another_confirms(
    providers: list[Any], fake_tmdb: FakeTmdb
) -> None:
    fake_tmdb.outage = Reply(503, {"message": "down"})
    draft = await recognizer(None, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2))
    assert draft.automatic, draft.reasons
    assert "provider_unavailable" not in codes(draft)
    assert "provider_error" in codes(draft)


async def test_a_rejected_key_is_not_an_outage(providers: list[Any], fake_tmdb: FakeTmdb, fake_tvdb: FakeTvdb,
                                               fake_tvmaze: FakeTvmaze) -> None:
    fake_tmdb.outage = Reply(401, {"status_code": 7, "status_message": "Invalid API key"})
    fake_tvdb.outage = Reply(401, {"status": "failure", "message": "Unauthorized"})
    fake_tvmaze.outage = Reply(404, {"name": "Not Found"})
    draft = await recognizer(None, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2))
    assert "provider_unavailable" not in codes(draft)
    assert not draft.automatic
    missing = next(r for r in draft.reasons if r.code == "no_candidate")     # a human must look
    assert missing.blocking
    assert missing.message.endswith("no metadata provider answered")
