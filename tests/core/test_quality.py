"""The better-copy order: resolution, then source, then a same-group REPACK/PROPER."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.quality import Quality, Verdict, compare, quality_of


@pytest.mark.parametrize(("name", "label"), [
    ("Film.2019.2160p.UHD.BluRay.REMUX.HDR.HEVC-GRP.mkv", "2160p Remux"),
    ("Film.2019.1080p.BluRay.x264-GRP.mkv", "1080p BluRay"),
    ("Film.2019.1080p.WEB-DL.DDP5.1.H.264-NTb.mkv", "1080p WEB-DL"),
    ("Film.2019.1080p.WEBRip.x264-RARBG.mkv", "1080p WEBRip"),
    ("Show.S01E02.720p.HDTV.x264-LOL.mkv", "720p HDTV"),
    ("Film.2019.DVDRip.XviD.avi", "DVD"),
])
def test_labels_name_resolution_and_source(name: str, label: str) -> None:
    assert quality_of(name).label == label


@pytest.mark.parametrize(("new", "old", "verdict"), [
    ("Film.2019.2160p.WEB-DL-A.mkv", "Film.2019.1080p.BluRay.REMUX-B.mkv", Verdict.BETTER),  # resolution
    ("Film.2019.1080p.BluRay.REMUX-A.mkv", "Film.2019.1080p.BluRay-B.mkv", Verdict.BETTER),
    ("Film.2019.1080p.BluRay-A.mkv", "Film.2019.1080p.WEB-DL-B.mkv", Verdict.BETTER),
    ("Film.2019.1080p.WEB-DL-A.mkv", "Film.2019.1080p.WEBRip-B.mkv", Verdict.BETTER),
    ("Film.2019.1080p.WEBRip-A.mkv", "Film.2019.1080p.HDTV-B.mkv", Verdict.BETTER),
    ("Film.2019.720p.BluRay-A.mkv", "Film.2019.1080p.HDTV-B.mkv", Verdict.WORSE),
    ("Film.2019.1080i.HDTV-A.mkv", "Film.2019.1080p.HDTV-B.mkv", Verdict.WORSE),
    ("Show.S01E02.REPACK.1080p.WEB-DL-GRP.mkv", "Show.S01E02.1080p.WEB-DL-GRP.mkv", Verdict.BETTER),
    ("Show.S01E02.PROPER.1080p.WEB-DL-GRP.mkv", "Show.S01E02.1080p.WEB-DL-GRP.mkv", Verdict.BETTER),
    ("Show.S01E02.REPACK2.1080p.WEB-DL-GRP.mkv", "Show.S01E02.REPACK.1080p.WEB-DL-GRP.mkv", Verdict.BETTER),
    # A revision of another group's release is not an upgrade of this one (Sonarr's rule for repacks).
    ("Show.S01E02.REPACK.1080p.WEB-DL-OTHER.mkv", "Show.S01E02.1080p.WEB-DL-GRP.mkv", Verdict.SAME),
    ("Film.2019.1080p.BluRay.x265-A.mkv", "Film.2019.1080p.BluRay.x264-B.mkv", Verdict.SAME),
    ("Film (2019).mkv", "Film.2019.1080p.BluRay-B.mkv", Verdict.UNKNOWN),
])
def test_order(new: str, old: str, verdict: Verdict) -> None:
    assert compare(quality_of(new), quality_of(old)) is verdict


def test_missing_parts_come_from_the_torrent_name() -> None:
    quality = quality_of("film.mkv", "Film.2019.2160p.BluRay.REMUX-GRP")
    assert quality.label == "2160p Remux"
    assert quality.group == "GRP"


def test_a_title_word_is_not_a_revision() -> None:
    assert quality_of("Real.Steel.2011.1080p.BluRay-GRP.mkv").revision == 1
    assert quality_of("The.Proper.Way.2011.1080p.BluRay-GRP.mkv").describe() == "1080p BluRay by GRP"


def test_describe_says_revision_and_group() -> None:
    assert quality_of("Show.S01E02.REPACK.1080p.WEB-DL-NTb.mkv").describe() == "1080p WEB-DL REPACK by NTb"
    assert Quality().describe() == "unknown quality"


qualities = st.builds(Quality, st.none() | st.integers(0, 9000), st.none() | st.integers(0, 9),
                      st.just(""), st.integers(1, 4), st.sampled_from([None, "A", "B"]))


@given(qualities, qualities)
def test_the_order_is_antisymmetric(a: Quality, b: Quality) -> None:
    flipped = {Verdict.BETTER: Verdict.WORSE, Verdict.WORSE: Verdict.BETTER}
    verdict = compare(a, b)
    assert compare(b, a) is flipped.get(verdict, verdict)


@given(st.text(max_size=120))
def test_any_name_gives_a_quality(name: str) -> None:
    assert isinstance(quality_of(name).describe(), str)
