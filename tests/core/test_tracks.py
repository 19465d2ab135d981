"""Track languages in order (pin, name, LLM, text), the sampling cap, and the flags a text can show."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.classify import classify
from jellybit.core.languages import language_code
from jellybit.core.numbering import Overrides, read_overrides
from jellybit.core.ports import LlmFileAnswer, SubtitleSample
from jellybit.core.records import PlanItem, Role, SourceFile
from jellybit.core.tracks import MAX_READ, apply_samples, plan_sampling, settle_known, unknown_language

GB = 1 << 30


def by_source(items: list[PlanItem]) -> dict[str, PlanItem]:
    return {i.source: i for i in items}


def english(confidence: float = 0.99, cues: int = 40, sdh_cues: int = 0, sdh: bool = False) -> SubtitleSample:
    return SubtitleSample(language="en", confidence=confidence, encoding="utf-8", cues=cues,
                          sdh_cues=sdh_cues, sdh=sdh)


def test_pin_then_name_then_llm() -> None:
    items = classify([SourceFile("M/Movie.mkv", 4 * GB), SourceFile("M/Movie.en.srt", 60_000),
                      SourceFile("M/Movie.srt", 60_000), SourceFile("M/Movie.forced.srt", 3_000),
                      SourceFile("M/Movie.mka", GB)])
    overrides = read_overrides({"files": {"M/Movie.en.srt": {"language": "de", "flags": ["sdh"]}}})
    llm = {"M/Movie.en.srt": LlmFileAnswer("M/Movie.en.srt", "subtitle", language="fr"),
           "M/Movie.srt": LlmFileAnswer("M/Movie.srt", "subtitle", language="English"),
           "M/Movie.forced.srt": LlmFileAnswer("M/Movie.forced.srt", "subtitle", language="xx"),
           "M/Movie.mka": LlmFileAnswer("M/Movie.mka", "audio", language="rus")}
    out = by_source(settle_known(items, overrides, llm))
    assert (out["M/Movie.en.srt"].language, out["M/Movie.en.srt"].flags) == ("de", ("sdh",))
    assert out["M/Movie.en.srt"].note == "language de pinned by a human; flags pinned by a human: sdh"
    assert (out["M/Movie.srt"].language, out["M/Movie.srt"].note) == ("en", "language en from the LLM")
    assert out["M/Movie.forced.srt"].language is None          # "xx" is no language
    assert out["M/Movie.forced.srt"].flags == ("forced",)      # the name's flag stays
    assert out["M/Movie.mka"].language == "ru"


def test_the_name_beats_the_llm_and_a_previous_reading_carries_its_flags() -> None:
    items = classify([SourceFile("M/Movie.mkv", 4 * GB), SourceFile("M/Movie.rus.srt", 60_000),
                      SourceFile("M/Movie.srt", 60_000)])
    llm = {"M/Movie.rus.srt": LlmFileAnswer("M/Movie.rus.srt", "subtitle", language="uk"),
           "M/Movie.srt": LlmFileAnswer("M/Movie.srt", "subtitle", language="en", flags=("sdh",))}
    out = by_source(settle_known(items, Overrides(), llm, source="the previous recognition"))
    assert out["M/Movie.rus.srt"].language == "ru"
    assert (out["M/Movie.srt"].language, out["M/Movie.srt"].flags) == ("en", ("sdh",))
    assert out["M/Movie.srt"].note == "language en from the previous recognition"


def test_only_untagged_text_subtitles_that_follow_a_video_are_read() -> None:
    items = classify([SourceFile("M/Movie.mkv", 4 * GB), SourceFile("M/Movie.en.srt", 60_000),
                      SourceFile("M/Movie.srt", 60_000), SourceFile("M/Movie.sup", 900_000),
                      SourceFile("M/Movie.idx", 9_000), SourceFile("M/Movie.sub", 900_000),
                      SourceFile("Other/Lonely.srt", 50_000)])
    items = [i.with_(attached_to=None) if i.source.startswith("Other/") else i for i in items]
    sampling = plan_sampling(items)
    assert sampling.read == ("M/Movie.srt",)


def test_a_season_pack_reads_two_files_per_group_and_shares_what_they_agree_on() -> None:
    files = [SourceFile(f"S/Show.S01E{n:02d}.mkv", GB) for n in range(1, 11)]
    files += [SourceFile(f"S/Subs/Show.S01E{n:02d}/1.srt", 40_000) for n in range(1, 11)]
    files += [SourceFile(f"S/Subs/Show.S01E{n:02d}/2.srt", 40_000) for n in range(1, 11)]
    items = classify(files)
    sampling = plan_sampling(items)
    assert len(sampling.groups) == 2
    assert sampling.read == ("S/Subs/Show.S01E01/1.srt", "S/Subs/Show.S01E10/1.srt",
                             "S/Subs/Show.S01E01/2.srt", "S/Subs/Show.S01E10/2.srt")
    russian = SubtitleSample(language="ru", confidence=1.0, encoding="cp1251", cues=50)
    samples = {"S/Subs/Show.S01E01/1.srt": english(), "S/Subs/Show.S01E10/1.srt": english(),
               "S/Subs/Show.S01E01/2.srt": russian, "S/Subs/Show.S01E10/2.srt": english()}
    out = by_source(apply_samples(items, sampling, samples))
    assert {out[f"S/Subs/Show.S01E{n:02d}/1.srt"].language for n in range(1, 11)} == {"en"}
    assert out["S/Subs/Show.S01E05/1.srt"].note == (
        "language en detected from the text of 2 similar file(s) such as S/Subs/Show.S01E01/1.srt")
    assert out["S/Subs/Show.S01E01/1.srt"].note == (
        "language en detected from its text (confidence 0.99, utf-8)")
    # the second group's two readings disagree: each read file keeps its own, the rest stay unknown
    assert out["S/Subs/Show.S01E01/2.srt"].language == "ru"
    assert out["S/Subs/Show.S01E10/2.srt"].language == "en"
    assert out["S/Subs/Show.S01E05/2.srt"].language is None
    assert out["S/Subs/Show.S01E05/2.srt"].note == (
        "language unknown: its similar files read as different languages")
    # a title told two unknown tracks of one video apart; it goes where their languages now differ
    assert out["S/Subs/Show.S01E01/1.srt"].track_title is None
    assert out["S/Subs/Show.S01E01/2.srt"].track_title is None
    assert out["S/Subs/Show.S01E10/1.srt"].track_title
    assert out["S/Subs/Show.S01E10/2.srt"].track_title


def test_a_two_thousand_file_pack_reads_at_most_the_cap() -> None:
    def name(n: int) -> str:             # distinct words, not only distinct numbers: 1,000 groups
        return "".join("abcdefghijklmnopqrstuvwxyz"[n // 26 ** k % 26] for k in range(3))

    files = []
    for n in range(1000):
        files.append(SourceFile(f"P/Film {name(n)}/Film {name(n)}.mkv", GB))
        files.append(SourceFile(f"P/Film {name(n)}/Film {name(n)}.srt", 40_000))
    items = classify(files)
    sampling = plan_sampling(items)
    assert 0 < len(sampling.read) <= MAX_READ
    assert sampling.unread
    out, reasons = unknown_language(apply_samples(items, sampling, {}))
    unread = next(i for i in out if i.source in sampling.unread)
    assert unread.note == (
        f"language unknown: not read (at most {MAX_READ} subtitle files are read per download)")
    assert [r.code for r in reasons] == ["subtitle_language_unknown"]
    assert "and" in reasons[0].message
    assert not reasons[0].blocking
    assert reasons[0].weight == 0


def test_sdh_and_forced_from_the_text_only_where_the_name_says_nothing() -> None:
    items = classify([SourceFile("M/Movie.mkv", 4 * GB), SourceFile("M/Subs/1.srt", 80_000),
                      SourceFile("M/Subs/2.srt", 4_000), SourceFile("M/Subs/3.srt", 90_000),
                      SourceFile("M/Subs/4.forced.srt", 85_000)])
    sampling = plan_sampling(items)
    samples = {"M/Subs/1.srt": english(), "M/Subs/2.srt": english(cues=20),
               "M/Subs/3.srt": english(sdh=True, sdh_cues=30),
               "M/Subs/4.forced.srt": english()}
    out = by_source(apply_samples(items, sampling, samples, pinned_flags={"M/Subs/1.srt"}))
    assert out["M/Subs/1.srt"].flags == ()
    assert out["M/Subs/2.srt"].flags == ("forced",)
    assert "forced: 4000 bytes against 90000 for the full en track" in (out["M/Subs/2.srt"].note or "")
    assert out["M/Subs/3.srt"].flags == ("sdh",)
    assert "hearing-impaired: 30 of 40 cues" in (out["M/Subs/3.srt"].note or "")
    assert out["M/Subs/4.forced.srt"].flags == ("forced",)       # the name's flag, nothing added


def test_a_lone_small_track_is_not_called_forced() -> None:
    items = classify([SourceFile("M/Short.Film.mkv", GB), SourceFile("M/Short.Film.srt", 3_000)])
    out = apply_samples(items, plan_sampling(items), {"M/Short.Film.srt": english(cues=25)})
    assert by_source(out)["M/Short.Film.srt"].flags == ()


def test_unknown_languages_are_noted_with_their_reason() -> None:
    items = classify([SourceFile("M/Movie.mkv", 4 * GB), SourceFile("M/Movie.srt", 60_000),
                      SourceFile("M/Movie.sup", 900_000)])
    sampling = plan_sampling(items)
    out = apply_samples(items, sampling, {"M/Movie.srt": SubtitleSample(problem="the file is empty")})
    out, reasons = unknown_language(out)
    notes = {i.source: i.note for i in out}
    assert notes["M/Movie.srt"] == "language unknown: the file is empty"
    assert notes["M/Movie.sup"] == "language unknown: a picture-based subtitle (.sup) has no text to read"
    assert reasons[0].message == ("2 subtitle file(s) have no known language and are linked without a "
                                  "language tag: M/Movie.srt, M/Movie.sup")


def test_no_reason_when_every_subtitle_has_a_language() -> None:
    items = classify([SourceFile("M/Movie.mkv", 4 * GB), SourceFile("M/Movie.en.srt", 60_000)])
    out, reasons = unknown_language(items)
    assert reasons == []
    assert out == list(items)
    assert next(i for i in out if i.role is Role.SUBTITLE).note is None


@given(st.text(max_size=60))
def test_any_llm_or_human_language_text_is_a_known_code_or_nothing(text: str) -> None:
    code = language_code(text)
    assert code is None or re.fullmatch(r"[a-z]{2,3}(-([A-Z]{2}|[A-Z][a-z]{3}|[0-9]{3}))?", code)
    pinned = language_code(text, any_code=True)
    assert pinned is None or pinned == code or re.fullmatch(r"[a-z]{2,3}", pinned)
