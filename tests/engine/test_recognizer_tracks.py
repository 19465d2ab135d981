"""The recognizer's track step end to end: real files read by the real sampler, the real LLM client
against the fake OpenAI server, real providers against their fakes, and the layouter's preview."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from jellybit import ident
from jellybit.adapters.library.disk import Sources
from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.llm import OpenAiLlm
from jellybit.adapters.metadata import MemoryCache, RetryPolicy, TmdbProvider
from jellybit.adapters.store import Store
from jellybit.adapters.subtitles import FileSubtitleSampler
from jellybit.config import LlmConfig, PathsConfig, RecognitionConfig
from jellybit.core.models import Download
from jellybit.core.ports import RecognitionRequest
from jellybit.core.records import PlanItem, Recognition, RecognitionDraft, Role, SourceFile
from jellybit.core.states import State
from jellybit.engine.recognizer import RecognitionEngine
from tests.support.fake_metadata import FakeTmdb
from tests.support.fake_openai import FakeOpenAI, file_entry, llm_answer

GB = 1 << 30
MATRIX = "The.Matrix.1999.1080p.BluRay.x264-GRP"
VIDEO = f"{MATRIX}/{MATRIX}.mkv"
SUBTITLE = f"{MATRIX}/{MATRIX}.srt"
FOLDER = "The Matrix (1999) [tmdbid-603]"
ENGLISH = ["Where were you last night?", "I told you, I was at work until ten.",
           "Don't lie to me. Your car wasn't there.", "Fine. I went to see my brother."]
RUSSIAN = ["Где ты был прошлой ночью?", "Я же сказал, я был на работе до десяти.",
           "Не ври мне. Твоей машины там не было.", "Ладно. Я ездил к брату."]


def srt(cues: list[str]) -> str:
    return "".join(f"{n}\n00:00:{n:02d},000 --> 00:00:{n:02d},900\n{cue}\n\n"
                   for n, cue in enumerate(cues, 1))


@pytest.fixture
def paths(tmp_path: Path) -> PathsConfig:
    for name in ("downloads", "movies", "series"):
        (tmp_path / name).mkdir()
    return PathsConfig(downloads=tmp_path / "downloads", movies=tmp_path / "movies",
                       series=tmp_path / "series")


@pytest.fixture
async def tmdb(fake_tmdb: FakeTmdb) -> AsyncIterator[TmdbProvider]:
    provider = TmdbProvider(fake_tmdb.config(), MemoryCache(3600),
                            policy=RetryPolicy(attempts=1, backoff=0.01))
    yield provider
    await provider.close()


@pytest.fixture
async def llm(fake_openai: FakeOpenAI) -> AsyncIterator[OpenAiLlm]:
    client = OpenAiLlm(LlmConfig(enabled=True, base_url=fake_openai.base_url, model="m", timeout=5),
                       max_retries=0)
    yield client
    await client.close()


def on_disk(paths: PathsConfig, files: dict[str, int | bytes]) -> tuple[Download, tuple[SourceFile, ...]]:
    """Write the torrent's files under downloads (videos sparse) and the download that owns them."""
    for source, content in files.items():
        path = paths.downloads / source
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            with path.open("wb") as out:
                out.truncate(content)
    download = Download(id=ident.new_id(), source_type="magnet", source_ref="magnet:?xt=urn:btih:" + "c" * 40,
                        display_name=MATRIX, context="", state=State.RECOGNIZING, qbt_tag="t",
                        created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z",
                        save_path=str(paths.downloads), content_path=str(paths.downloads / MATRIX))
    sources = tuple(SourceFile(s, c if isinstance(c, int) else len(c)) for s, c in files.items())
    return download, sources


def recognizer(paths: PathsConfig, tmdb: TmdbProvider, llm: OpenAiLlm | None = None) -> RecognitionEngine:
    sampler = FileSubtitleSampler(lambda download: Sources(download, paths).path)
    return RecognitionEngine(llm=llm, providers=[tmdb], config=RecognitionConfig(), languages=sampler)


async def preview(
    store: Store, paths: PathsConfig, download: Download, draft: RecognitionDraft,
) -> dict[str, PlanItem]:
    laid = await LayoutEngine(store, paths).preview(download, draft)
    assert not laid.reasons, laid.reasons
    return {i.source: i for i in laid.plan.items}


async def test_an_untagged_english_subtitle_is_laid_out_as_en(
    paths: PathsConfig, tmdb: TmdbProvider, store: Store
) -> None:
    download, files = on_disk(paths, {VIDEO: 8 * GB, SUBTITLE: srt(ENGLISH).encode()})
    draft = await recognizer(paths, tmdb).recognize(RecognitionRequest(download=download, files=files))
    assert draft.automatic, draft.reasons
    assert "subtitle_language_unknown" not in {r.code for r in draft.reasons}
    items = await preview(store, paths, download, draft)
    assert items[SUBTITLE].target == f"{FOLDER}/{FOLDER}.en.srt"
    assert (items[SUBTITLE].note or "").startswith("language en detected from its text (confidence")


async def test_an_untagged_cp1251_russian_subtitle_is_laid_out_as_ru(
    paths: PathsConfig, tmdb: TmdbProvider, store: Store
) -> None:
    download, files = on_disk(paths, {VIDEO: 8 * GB, SUBTITLE: srt(RUSSIAN).encode("cp1251")})
    draft = await recognizer(paths, tmdb).recognize(RecognitionRequest(download=download, files=files))
    items = await preview(store, paths, download, draft)
    assert items[SUBTITLE].target == f"{FOLDER}/{FOLDER}.ru.srt"
    assert "cp1251" in (items[SUBTITLE].note or "")


async def test_an_unreadable_subtitle_stays_untagged_and_the_plan_says_so(
    paths: PathsConfig, tmdb: TmdbProvider, store: Store
) -> None:
    download, files = on_disk(paths, {VIDEO: 8 * GB, SUBTITLE: srt(["OK.", "Mike!"]).encode()})
    draft = await recognizer(paths, tmdb).recognize(RecognitionRequest(download=download, files=files))
    unknown = next(r for r in draft.reasons if r.code == "subtitle_language_unknown")
    assert (unknown.weight, unknown.blocking) == (0.0, False)
    assert SUBTITLE in unknown.message
    assert draft.automatic, draft.reasons                  # a note, not a reason to ask a human
    items = await preview(store, paths, download, draft)
    assert items[SUBTITLE].target == f"{FOLDER}/{FOLDER}.srt"
    assert "language unknown: too little text" in (items[SUBTITLE].note or "")


async def test_the_llms_language_outranks_the_text_and_stands_on_apply(
    paths: PathsConfig, tmdb: TmdbProvider, store: Store, llm: OpenAiLlm, fake_openai: FakeOpenAI
) -> None:
    download, files = on_disk(paths, {VIDEO: 8 * GB, SUBTITLE: srt(RUSSIAN).encode()})

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        ids = {label: ref for ref, label in fake_openai.listed().items()}
        return llm_answer("movie", "The Matrix", 1999, [
            file_entry(ids[VIDEO], "video"), file_entry(ids[SUBTITLE], "subtitle", language="ukr")])

    fake_openai.respond_with(respond)
    draft = await recognizer(paths, tmdb, llm).recognize(RecognitionRequest(download=download, files=files))
    items = await preview(store, paths, download, draft)
    assert items[SUBTITLE].target == f"{FOLDER}/{FOLDER}.uk.srt"   # the LLM outranks the text
    assert items[SUBTITLE].note == "language uk from the LLM"          # its text was never read
    # on apply the LLM is not asked again: the previous recognition's language stands
    previous = Recognition(**{**draft.__dict__, "id": ident.new_id()})
    asked = len(fake_openai.requests)
    again = await recognizer(paths, tmdb, llm).recognize(
        RecognitionRequest(download=download, files=files, previous=previous, use_llm=False))
    assert len(fake_openai.requests) == asked
    subtitle = next(i for i in again.plan.items if i.source == SUBTITLE)
    assert (subtitle.language, subtitle.note) == ("uk", "language uk from the previous recognition")


async def test_the_llms_role_for_a_video_in_an_odd_folder_is_used(
    paths: PathsConfig, tmdb: TmdbProvider, store: Store, llm: OpenAiLlm, fake_openai: FakeOpenAI
) -> None:
    odd = f"{MATRIX}/Stuff/Making.mkv"
    download, files = on_disk(paths, {VIDEO: 8 * GB, odd: 4 * GB, f"{MATRIX}/{MATRIX}.en.srt": b"1\n"})

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        ids = {label: ref for ref, label in fake_openai.listed().items()}
        return llm_answer("movie", "The Matrix", 1999, [
            file_entry(ids[VIDEO], "video"), file_entry(ids[odd], "extra", extra_kind="behind the scenes")])

    fake_openai.respond_with(respond)
    without = await recognizer(paths, tmdb).recognize(RecognitionRequest(download=download, files=files))
    # a second video nothing places: read as a second film ("Making") that matches nothing
    assert "film_uncertain" in {r.code for r in without.reasons if r.blocking}
    assert not without.automatic
    draft = await recognizer(paths, tmdb, llm).recognize(RecognitionRequest(download=download, files=files))
    assert draft.automatic, draft.reasons
    items = await preview(store, paths, download, draft)
    assert items[odd].role is Role.EXTRA
    assert items[odd].target == f"{FOLDER}/behind the scenes/Making.mkv"
    assert (items[odd].note or "").startswith("role extra from the LLM (the classifier said video)")
    assert items[VIDEO].target == f"{FOLDER}/{FOLDER}.mkv"


async def test_the_llm_cannot_ignore_the_only_video(
    paths: PathsConfig, tmdb: TmdbProvider, store: Store, llm: OpenAiLlm, fake_openai: FakeOpenAI
) -> None:
    download, files = on_disk(paths, {VIDEO: 8 * GB})

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        ids = {label: ref for ref, label in fake_openai.listed().items()}
        return llm_answer("movie", "The Matrix", 1999, [file_entry(ids[VIDEO], "ignored")])

    fake_openai.respond_with(respond)
    draft = await recognizer(paths, tmdb, llm).recognize(RecognitionRequest(download=download, files=files))
    refused = next(r for r in draft.reasons if r.code == "llm_role_refused")
    assert (refused.weight, refused.blocking) == (0.0, False)
    assert draft.automatic, draft.reasons
    items = await preview(store, paths, download, draft)
    assert items[VIDEO].role is Role.VIDEO
    assert items[VIDEO].target == f"{FOLDER}/{FOLDER}.mkv"
    assert (items[VIDEO].note or "").startswith("the LLM called it ignored; kept as the main video")


async def test_without_a_sampler_an_untagged_subtitle_says_its_text_was_not_read(
    paths: PathsConfig, tmdb: TmdbProvider
) -> None:
    download, files = on_disk(paths, {VIDEO: 8 * GB, SUBTITLE: srt(ENGLISH).encode()})
    plain = RecognitionEngine(llm=None, providers=[tmdb], config=RecognitionConfig())
    draft = await plain.recognize(RecognitionRequest(download=download, files=files))
    subtitle = next(i for i in draft.plan.items if i.source == SUBTITLE)
    assert subtitle.language is None
    assert subtitle.note == "language unknown: subtitle text is not read (no reader is configured)"
    assert "subtitle_language_unknown" in {r.code for r in draft.reasons}
