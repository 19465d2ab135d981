"""Decoding a subtitle file's head, stripping its markup, and the cue statistics (core/subtitle_text)."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.subtitle_text import Decoded, cue_stats, cue_texts, decode_head

RUSSIAN = "Где ты был прошлой ночью?\nЯ же сказал, я был на работе до десяти."
FRENCH = "Où étais-tu hier soir ? Je te l'ai dit, j'étais au travail jusqu'à dix heures."


def srt(*cues: str) -> str:
    return "".join(f"{n}\n00:00:{n:02d},000 --> 00:00:{n:02d},900\n{cue}\n\n"
                   for n, cue in enumerate(cues, 1))


# ------------------------------------------------------------------------------------------- decoding


@pytest.mark.parametrize(("data", "encoding"), [
    (codecs.BOM_UTF8 + RUSSIAN.encode(), "utf-8"),
    (codecs.BOM_UTF16_LE + RUSSIAN.encode("utf-16-le"), "utf-16-le"),
    (codecs.BOM_UTF16_BE + RUSSIAN.encode("utf-16-be"), "utf-16-be"),
    (RUSSIAN.encode(), "utf-8"),
])
def test_a_byte_order_mark_or_valid_utf8_decides(data: bytes, encoding: str) -> None:
    decoded = decode_head(data, complete=True)
    assert decoded == Decoded(RUSSIAN, encoding)


def test_utf16_without_a_mark_is_told_by_its_zero_bytes() -> None:
    for encoding in ("utf-16-le", "utf-16-be"):
        decoded = decode_head(srt(RUSSIAN).encode(encoding), complete=True)
        assert decoded is not None
        assert (decoded.encoding, decoded.guessed) == (encoding, True)
        assert RUSSIAN in decoded.text


def test_a_utf8_character_cut_at_the_end_of_the_head_is_dropped_not_an_error() -> None:
    data = "ночью".encode()[:-1]          # "ю" is two bytes: the head ends after the first
    assert decode_head(data) == Decoded("ночь", "utf-8")
    # a whole file must be complete UTF-8; these bytes are no 8-bit text either
    assert decode_head(data, complete=True) is None


def test_cp1251_russian_is_guessed_as_cp1251() -> None:
    decoded = decode_head(srt(*RUSSIAN.split("\n")).encode("cp1251"), complete=True)
    assert decoded is not None
    assert (decoded.encoding, decoded.guessed) == ("cp1251", True)
    assert cue_texts(decoded.text) == RUSSIAN.split("\n")
    assert decoded.plausible("ru")
    assert decoded.plausible("uk")
    assert not decoded.plausible("fr")


def test_latin1_french_is_guessed_as_western() -> None:
    decoded = decode_head(srt(FRENCH).encode("latin-1"), complete=True)
    assert decoded is not None
    assert decoded.encoding == "cp1252"
    assert cue_texts(decoded.text) == [FRENCH]
    assert decoded.plausible("fr")
    assert not decoded.plausible("ru")
    assert not decoded.plausible("ja")


def test_the_guess_looks_at_the_cues_not_at_a_long_ascii_header() -> None:
    header = "[Script Info]\nScriptType: v4.00+\n" + "".join(f"Style: Style{n},Arial,20\n" for n in range(60))
    events = "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    lines = "".join(f"Dialogue: 0,0:00:0{n}.00,0:00:0{n}.50,Default,,0,0,0,,{line}\n"
                    for n, line in enumerate(RUSSIAN.split("\n")))
    decoded = decode_head((header + events + lines).encode("cp1251"), complete=True)
    assert decoded is not None
    assert decoded.encoding == "cp1251"


@pytest.mark.parametrize(("text", "encoding"), [
    ("어젯밤에 어디 있었어? 말했잖아, 열 시까지 회사에 있었다고.", "euc_kr"),
    ("你昨晚去哪儿了？我跟你说过了，我一直工作到十点。", "gbk"),
    ("昨日の夜、どこにいたの？言ったでしょ、十時まで仕事だったって。", "shift_jis"),
    ("أين كنت الليلة الماضية؟ قلت لك، كنت في العمل حتى العاشرة.", "cp1256"),
])
def test_legacy_double_byte_and_arabic_encodings_are_not_guessed_as_western(text: str, encoding: str) -> None:
    decoded = decode_head(srt(text).encode(encoding), complete=True)
    # either refused, or a Cyrillic guess the detector must still confirm; never Western text
    assert decoded is None or decoded.encoding == "cp1251"


def test_empty_and_binary_heads_are_not_text() -> None:
    assert decode_head(b"") is None
    assert decode_head(b"\n\n  \n") is None
    assert decode_head(bytes(range(256)) * 8) is None
    assert decode_head(b"\x1aE\xdf\xa3\x93\x82\x81\x01\x42\x86\x81\x01" + b"\x00" * 100) is None  # Matroska


# ------------------------------------------------------------------------------------------- markup


def test_srt_loses_indexes_timings_and_tags() -> None:
    text = srt("<i>Where were you</i>\n<font color=\"#ff0\">last night?</font>", "{\\an8}I told you.")
    assert cue_texts(text) == ["Where were you\nlast night?", "I told you."]


def test_srt_with_windows_line_ends_and_no_blank_line_at_the_end() -> None:
    text = ("1\r\n00:00:01,000 --> 00:00:02,000\r\nHello there.\r\n\r\n"
            "2\r\n00:00:03,000 --> 00:00:04,000\r\nBye.")
    assert cue_texts(text) == ["Hello there.", "Bye."]


def test_vtt_loses_its_header_notes_styles_identifiers_and_voice_tags() -> None:
    text = ("WEBVTT - a title\n\nNOTE written by hand\nacross two lines\n\nSTYLE\n::cue { color: red }\n\n"
            "intro\n00:01.000 --> 00:02.000 align:start position:10%\n<v Bob>Hello &amp; welcome</v>\n"
            "<c.yellow>my</c> <00:00:01.500>friend\n\n00:00:03.000 --> 00:00:04.000\nSecond &lt;cue&gt;\n")
    assert cue_texts(text) == ["Hello & welcome\nmy friend", "Second <cue>"]


def test_ass_keeps_only_the_text_field_of_dialogue_lines() -> None:
    text = (
        "[Script Info]\nTitle: Not a cue\n\n[V4+ Styles]\nFormat: Name, Fontname\nStyle: Default,Arial\n\n"
        "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
        "Comment: 0,0:00:00.00,0:00:01.00,Default,,0,0,0,,a comment, not a cue\n"
        "Dialogue: 0,0:00:01.00,0:00:02.00,Default,Bob,0,0,0,,{\\i1}Hello, friend{\\i0}\\NSecond\\hline\n"
        "Dialogue: 0,0:00:03.00,0:00:04.00,Sign,,0,0,0,,{\\p1}m 0 0 l 100 0 100 100{\\p0}Exit\n"
        "Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,{\\pos(10,10)}\n"
    )
    assert cue_texts(text) == ["Hello, friend\nSecond line", "Exit"]


def test_ssa_with_its_own_format_line() -> None:
    text = ("[Script Info]\nScriptType: v4.00\n\n[Events]\n"
            "Format: Marked, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
            "Dialogue: Marked=0,0:00:01.00,0:00:02.00,Default,,0000,0000,0000,,Bonjour, ça va ?\n")
    assert cue_texts(text) == ["Bonjour, ça va ?"]


def test_sami_loses_head_style_and_tags() -> None:
    text = ("<SAMI><HEAD><TITLE>Title</TITLE><STYLE><!-- .KRCC {Name:Korean; lang:ko-KR} --></STYLE></HEAD>"
            "<BODY><SYNC Start=100><P Class=KRCC>어젯밤에<br>어디 있었어?\n"
            "<SYNC Start=900><P Class=KRCC>&nbsp;"
            "</BODY></SAMI>")
    assert cue_texts(text) == ["어젯밤에\n어디 있었어?"]


# ------------------------------------------------------------------------------------------- hearing impaired


def test_sound_descriptions_music_and_speaker_labels_make_sdh() -> None:
    ordinary = [f"Line number {n}, said plainly." for n in range(30)]
    assert not cue_stats(ordinary).sdh
    marked = ["[door slams]", "(SIGHS) Fine.", "♪ ♪", "JOHN: Get in.", "- ДЖОН: Садись.", "[Phone rings]"]
    stats = cue_stats(ordinary[:24] + marked)
    assert (stats.cues, stats.sdh_cues) == (30, 6)
    assert stats.sdh


def test_lyrics_between_music_notes_and_few_marks_are_not_sdh() -> None:
    cues = ["♪ Happy birthday to you ♪", *[f"Plain line {n}" for n in range(20)], "[laughs]"]
    stats = cue_stats(cues)
    assert stats.sdh_cues == 1
    assert not stats.sdh
    assert not cue_stats(["[door slams]", "[sighs]"]).sdh       # too few cues to tell


# ------------------------------------------------------------------------------------------- untrusted bytes


@given(st.binary(max_size=4096), st.booleans())
def test_any_bytes_decode_to_text_or_none_without_raising(data: bytes, complete: bool) -> None:
    decoded = decode_head(data, complete=complete)
    if decoded is not None:
        assert isinstance(decoded.text, str)
        assert decoded.text.strip()
        assert decoded.encoding in {"utf-8", "utf-16-le", "utf-16-be", "cp1251", "cp1252"}
        assert isinstance(cue_texts(decoded.text), list)


@given(st.text(max_size=3000))
def test_any_text_strips_to_cues_without_markup_or_raising(text: str) -> None:
    cues = cue_texts(text)
    for cue in cues:
        assert cue
        assert cue == cue.strip()
        assert "-->" not in cue or "-->" in text
    stats = cue_stats(cues)
    assert 0 <= stats.sdh_cues <= stats.cues == len(cues)


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40),
                min_size=1, max_size=20))
def test_cue_text_survives_a_round_trip_through_srt(lines: list[str]) -> None:
    kept = [" ".join(line.replace("<", " ").replace(">", " ").replace("{", " ").replace("}", " ")
                     .replace("&", " ").replace("\\", " ").split()) for line in lines]
    kept = [k for k in kept if k and not k.isdigit() and "-->" not in k]
    assert cue_texts(srt(*kept)) == kept
