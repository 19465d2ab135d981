"""The subtitle sampler on real files in tmp_path: encodings, formats, odd files, and the bounded read."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jellybit import ident
from jellybit.adapters.language_id import LanguageIdentifier
from jellybit.adapters.library.disk import Sources
from jellybit.adapters.subtitles import HEAD_BYTES, FileSubtitleSampler, read_head, sample_bytes
from jellybit.config import PathsConfig
from jellybit.core.models import Download
from jellybit.core.states import State

ENGLISH = ["Where were you last night?", "I told you, I was at work until ten.",
           "Don't lie to me. Your car wasn't there.", "Fine. I went to see my brother."]
RUSSIAN = ["Где ты был прошлой ночью?", "Я же сказал, я был на работе до десяти.",
           "Не ври мне. Твоей машины там не было.", "Ладно. Я ездил к брату."]
FRENCH = ["Où étais-tu hier soir ?", "Je te l'ai dit, j'étais au travail jusqu'à dix heures.",
          "Ne me mens pas. Ta voiture n'était pas là.", "D'accord. Je suis allé voir mon frère."]
GERMAN = ["Wo warst du gestern Abend?", "Ich hab's dir doch gesagt, ich war bis zehn bei der Arbeit.",
          "Lüg mich nicht an. Dein Auto war nicht da.", "Na gut. Ich war bei meinem Bruder."]
JAPANESE = ["昨日の夜、どこにいたの？", "言ったでしょ、十時まで仕事だったって。",
            "嘘つかないで。車がなかったじゃない。"]


def srt(cues: list[str]) -> str:
    return "".join(f"{n}\n00:00:{n % 60:02d},000 --> 00:00:{n % 60:02d},900\n<i>{cue}</i>\n\n"
                   for n, cue in enumerate(cues, 1))


def ass(cues: list[str]) -> str:
    head = ("[Script Info]\nTitle: Episode 1\nScriptType: v4.00+\n\n[V4+ Styles]\n"
            "Format: Name, Fontname, Fontsize\nStyle: Default,Arial,20\n\n[Events]\n"
            "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n")
    return head + "".join(f"Dialogue: 0,0:00:0{n}.00,0:00:0{n}.90,Default,,0,0,0,,{{\\i1}}{cue}{{\\i0}}\n"
                          for n, cue in enumerate(cues))


def vtt(cues: list[str]) -> str:
    return "WEBVTT\n\n" + "".join(f"cue{n}\n00:0{n}.000 --> 00:0{n}.900 align:start\n<v Anna>{cue}</v>\n\n"
                                  for n, cue in enumerate(cues))


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    root = tmp_path / "downloads"
    (root / "Movie").mkdir(parents=True)
    return root


@pytest.fixture
def sampler(tmp_path: Path, downloads: Path) -> FileSubtitleSampler:
    paths = PathsConfig(downloads=downloads, movies=tmp_path / "movies", series=tmp_path / "series")
    return FileSubtitleSampler(lambda download: Sources(download, paths).path)


def download(save_path: Path) -> Download:
    return Download(id=ident.new_id(), source_type="magnet", source_ref="magnet:?xt=urn:btih:" + "b" * 40,
                    display_name="Movie", context="", state=State.RECOGNIZING, qbt_tag="t",
                    created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z",
                    save_path=str(save_path), content_path=str(save_path / "Movie"))


CASES = {
    "utf8.srt": (srt(ENGLISH).encode(), "en", "utf-8"),
    "utf16le.srt": (codecs.BOM_UTF16_LE + srt(RUSSIAN).encode("utf-16-le"), "ru", "utf-16-le"),
    "utf16be.srt": (codecs.BOM_UTF16_BE + srt(GERMAN).encode("utf-16-be"), "de", "utf-16-be"),
    "bom.srt": (codecs.BOM_UTF8 + srt(JAPANESE).encode(), "ja", "utf-8"),
    "cp1251.srt": (srt(RUSSIAN).encode("cp1251"), "ru", "cp1251"),
    "latin1.srt": (srt(FRENCH).encode("latin-1"), "fr", "cp1252"),
    "episode.ass": (ass(RUSSIAN).encode(), "ru", "utf-8"),
    "episode.vtt": (vtt(GERMAN).encode(), "de", "utf-8"),
}


async def test_every_encoding_and_format_is_read_and_detected(
    sampler: FileSubtitleSampler, downloads: Path
) -> None:
    for name, (data, _, _) in CASES.items():
        (downloads / "Movie" / name).write_bytes(data)
    samples = await sampler.sample(download(downloads), [f"Movie/{name}" for name in CASES])
    for name, (_, language, encoding) in CASES.items():
        sample = samples[f"Movie/{name}"]
        assert (sample.language, sample.encoding, sample.problem) == (language, encoding, None), name
        assert sample.confidence >= 0.9
        assert sample.cues >= 3
        assert not sample.sdh


async def test_empty_binary_and_short_files_have_no_language_and_say_why(
    sampler: FileSubtitleSampler, downloads: Path
) -> None:
    folder = downloads / "Movie"
    (folder / "empty.srt").write_bytes(b"")
    (folder / "binary.srt").write_bytes(os.urandom(1024) + b"\0" * 64)
    (folder / "short.srt").write_text(srt(["OK."]))
    (folder / "names.srt").write_text(srt(["Mike!", "Anna!"]))
    samples = await sampler.sample(download(downloads), [
        "Movie/empty.srt", "Movie/binary.srt", "Movie/short.srt", "Movie/names.srt", "Movie/missing.srt"])
    assert samples["Movie/empty.srt"].problem == "the file is empty"
    assert "not text" in (samples["Movie/binary.srt"].problem or "")
    assert "too little text" in (samples["Movie/short.srt"].problem or "")
    assert "too little text" in (samples["Movie/names.srt"].problem or "")
    assert "cannot read it" in (samples["Movie/missing.srt"].problem or "")
    assert all(s.language is None for s in samples.values())


async def test_a_ten_megabyte_file_costs_one_head(sampler: FileSubtitleSampler, downloads: Path) -> None:
    path = downloads / "Movie" / "huge.srt"
    block = srt(ENGLISH * 50).encode()
    with path.open("wb") as out:
        while out.tell() < 10 * 1024 * 1024:
            out.write(block)
    before = path.stat()
    data, complete = read_head(path)
    assert (len(data), complete) == (HEAD_BYTES, False)
    sample = (await sampler.sample(download(downloads), ["Movie/huge.srt"]))["Movie/huge.srt"]
    assert sample.language == "en"
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)   # read, never written


async def test_links_fifos_and_paths_outside_downloads_are_refused(
    sampler: FileSubtitleSampler, downloads: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.srt"
    secret.write_text(srt(ENGLISH))
    (downloads / "Movie" / "link.srt").symlink_to(secret)
    os.mkfifo(downloads / "Movie" / "fifo.srt")
    samples = await sampler.sample(download(downloads), ["Movie/link.srt", "Movie/fifo.srt", "../secret.srt"])
    assert "symbolic link" in (samples["Movie/link.srt"].problem or "")
    assert "not a regular file" in (samples["Movie/fifo.srt"].problem or "")
    assert "not a plain path" in (samples["../secret.srt"].problem or "")
    outside = download(tmp_path)          # a save path outside the downloads root
    samples = await sampler.sample(outside, ["secret.srt"])
    assert "outside the downloads directory" in (samples["secret.srt"].problem or "")
    assert all(s.language is None for s in samples.values())


async def test_hearing_impaired_cues_are_counted(sampler: FileSubtitleSampler, downloads: Path) -> None:
    cues = [*ENGLISH * 3, "[door slams]", "(SIGHS)", "MIKE: Over here!", "♪ ♪"]
    (downloads / "Movie" / "sdh.srt").write_text(srt(cues))
    sample = (await sampler.sample(download(downloads), ["Movie/sdh.srt"]))["Movie/sdh.srt"]
    assert (sample.language, sample.cues, sample.sdh_cues, sample.sdh) == ("en", 16, 4, True)


def test_a_misread_encoding_never_becomes_a_language() -> None:
    # Greek in its own code page reads as Cyrillic letters under the cp1251 guess; only a confident
    # detection of a Cyrillic language would be accepted, and this text gives none.
    greek = srt(["Πού ήσουν χθες το βράδυ;", "Σου το είπα, ήμουν στη δουλειά μέχρι τις δέκα.",
                 "Μη μου λες ψέματα. Το αυτοκίνητό σου δεν ήταν εκεί."]).encode("cp1253")
    sample = sample_bytes(greek, True, LanguageIdentifier())
    assert sample.language is None
    assert sample.problem


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048))
def test_any_bytes_give_a_sample_never_an_exception(data: bytes) -> None:
    sample = sample_bytes(data, True, LanguageIdentifier())
    assert (sample.language is None) == (sample.problem is not None)
    assert 0.0 <= sample.confidence <= 1.0
