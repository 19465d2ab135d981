"""Subtitle text, read for its language: decode a file's head, strip SRT/VTT/ASS/SAMI markup, count cues.

Pure functions over bytes and strings; the file reading and the language detector live in
`adapters/subtitles.py`. Decoding follows the order a human would: a byte-order mark, then
UTF-16 without a mark (NUL bytes on one side), then strict UTF-8, then a single-byte guess
between cp1251 (Cyrillic) and cp1252/latin-1 (Western) from the byte statistics — a guess the
caller must confirm with a confident detection of a language written in that script.
"""

from __future__ import annotations

import codecs
import html
import re
from dataclasses import dataclass

# Formats whose cues are text; VobSub (.sub/.idx), PGS (.sup) and Matroska (.mks) hold pictures.
TEXT_EXTENSIONS = frozenset({".srt", ".ass", ".ssa", ".vtt", ".smi", ".sami"})

CYRILLIC_LANGUAGES = frozenset({"ru", "uk", "be", "bg", "sr", "mk", "kk"})
# Languages not written in the Latin alphabet: a cp1252 (Western) decoding can never be one of them.
NON_LATIN_LANGUAGES = CYRILLIC_LANGUAGES | frozenset({
    "el", "he", "ar", "fa", "hi", "bn", "ta", "te", "th", "ja", "ko", "zh", "ka", "hy",
})

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
WESTERN_MAX_HIGH_SHARE = 0.3      # Western text: at most this share of its letters are bytes >= 0x80
CYRILLIC_MIN_LOWER_SHARE = 0.6    # Cyrillic text is mostly lower case (cp1251 0xE0-0xFF) ...
CYRILLIC_MAX_SYMBOL_SHARE = 0.15  # ... and rarely uses cp1251's 0x80-0xBF (symbols, rare letters)
MAX_CONTROL_SHARE = 0.02          # more control characters than this: not text
SDH_MIN_CUES = 10
SDH_MIN_SHARE = 0.15


@dataclass(frozen=True)
class Decoded:
    """A file head as text: the encoding used, and whether it was only a guess."""

    text: str
    encoding: str
    guessed: bool = False

    def plausible(self, language: str) -> bool:
        """Whether a language detected in this text can be written in its encoding."""
        if self.encoding == "cp1251":
            return language in CYRILLIC_LANGUAGES
        if self.encoding == "cp1252":
            return language not in NON_LATIN_LANGUAGES
        return True


@dataclass(frozen=True)
class CueStats:
    """What the cues of a sample say apart from their language."""

    cues: int                  # cues with any text
    letters: int               # letters in them
    sdh_cues: int              # cues with a sound description, a music-only line or a SPEAKER: label

    @property
    def sdh(self) -> bool:
        """Hearing-impaired subtitles: many cues describe sounds or name who speaks."""
        return self.cues >= SDH_MIN_CUES and self.sdh_cues >= SDH_MIN_SHARE * self.cues


# ------------------------------------------------------------------------------------------- decoding


def _incremental(data: bytes, encoding: str, final: bool, errors: str = "strict") -> str:
    decoder = codecs.getincrementaldecoder(encoding)(errors=errors)
    return decoder.decode(data, final=final)


def _utf16_without_bom(data: bytes) -> str | None:
    head = data[:4096]
    pairs = len(head) // 2
    if pairs < 2:
        return None
    even = head[0::2].count(0) / pairs
    odd = head[1::2].count(0) / pairs
    if odd > 0.1 and even < 0.01:
        return "utf-16-le"
    if even > 0.1 and odd < 0.01:
        return "utf-16-be"
    return None


def _single_byte(data: bytes) -> str | None:
    """cp1252 for text with few high bytes, cp1251 for lower-case-heavy high bytes, else None."""
    ascii_letters = sum(1 for b in data if 0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A)
    high = sum(1 for b in data if b >= 0x80)
    if high + ascii_letters == 0:
        return "cp1252"
    if high / (high + ascii_letters) <= WESTERN_MAX_HIGH_SHARE:
        return "cp1252"
    upper = sum(1 for b in data if 0xC0 <= b <= 0xDF)
    lower = sum(1 for b in data if b >= 0xE0)
    symbols = high - upper - lower
    if lower / high >= CYRILLIC_MIN_LOWER_SHARE and symbols / high <= CYRILLIC_MAX_SYMBOL_SHARE:
        return "cp1251"
    return None        # Greek, Arabic, a CJK double-byte encoding, or not text: not guessed


def _is_text(text: str) -> bool:
    if not text.strip():
        return False
    controls = sum(1 for ch in text if (ord(ch) < 32 and ch not in "\t\n\r\f") or ch == "\ufffd")
    return controls <= MAX_CONTROL_SHARE * len(text)


def decode_head(data: bytes, *, complete: bool = False) -> Decoded | None:
    """Decode the first bytes of a subtitle file; None for an empty, binary or undecodable head.

    `complete`: the bytes are the whole file (otherwise a multi-byte character cut at the end
    is dropped rather than an error).
    """
    if not data:
        return None
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            text = _incremental(data[len(bom):], encoding, complete, errors="replace")
            return Decoded(text, encoding) if _is_text(text) else None
    if b"\0" in data:
        # Text in an 8-bit encoding has no NUL bytes; UTF-16 has them on one side (its ASCII characters).
        wide = _utf16_without_bom(data)
        if wide is None:
            return None
        text = _incremental(data, wide, complete, errors="replace")
        return Decoded(text, wide, guessed=True) if _is_text(text) else None
    try:
        text = _incremental(data, "utf-8", complete)
    except UnicodeDecodeError:
        pass
    else:
        return Decoded(text, "utf-8") if _is_text(text) else None
    # The statistics are taken over the cues alone: an ASS header is long and all ASCII.
    # latin-1 maps every byte to one character, so the markup parses the same in any 8-bit encoding.
    content = "\n".join(cue_texts(data.decode("latin-1"))).encode("latin-1", errors="ignore")
    encoding = _single_byte(content or data)
    if encoding is None:
        return None
    text = data.decode(encoding, errors="replace")
    return Decoded(text, encoding, guessed=True) if _is_text(text) else None


# ------------------------------------------------------------------------------------------- markup

_TIMING = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?[,.]\d{1,3}\s*-->")
_OVERRIDE = re.compile(r"\{[^{}]{0,400}\}")
_DRAWING = re.compile(r"\{[^{}]*\\p[1-9][^{}]*\}.*?(?=\{[^{}]*\\p0[^{}]*\}|$)", re.DOTALL)
_TAG = re.compile(r"<[^<>]{0,400}>")
_SPACES = re.compile(r"[ \t\u00a0]+")
_VTT_BLOCKS = ("WEBVTT", "NOTE", "STYLE", "REGION")
_SAMI_SKIP = re.compile(r"(?is)<(head|style|title)\b.*?</\1\s*>")
_SAMI_BREAK = re.compile(r"(?i)<br\s*/?>")
_ASS_DEFAULT_FIELDS = 10


def _clean_line(line: str) -> str:
    line = _DRAWING.sub("", line)
    line = _OVERRIDE.sub("", line).replace("\\h", " ")
    line = html.unescape(_TAG.sub("", line))
    return _SPACES.sub(" ", line).strip()


def _clean_cue(lines: list[str]) -> str:
    cleaned = (_clean_line(part) for line in lines for part in re.split(r"\\[Nn]", line))
    return "\n".join(c for c in cleaned if c)


def _ass_cues(text: str) -> list[str]:
    fields = _ASS_DEFAULT_FIELDS
    in_events = False
    cues = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            in_events = line.casefold() == "[events]"
            continue
        if not in_events:
            continue
        key, _, value = line.partition(":")
        key = key.strip().casefold()
        if key == "format":
            fields = max(1, len(value.split(",")))
        elif key == "dialogue":
            parts = value.split(",", fields - 1)
            if len(parts) == fields:
                cue = _clean_cue([parts[-1]])
                if cue:
                    cues.append(cue)
    return cues


def _sami_cues(text: str) -> list[str]:
    body = _SAMI_SKIP.sub("", text)
    cues = []
    for chunk in re.split(r"(?i)<sync\b[^>]*>", body)[1:]:
        cue = _clean_cue(_SAMI_BREAK.sub("\n", chunk).splitlines())
        if cue:
            cues.append(cue)
    return cues


def _block_cues(text: str) -> list[str]:
    """SRT and WebVTT: blocks split by blank lines; the text follows the timing line."""
    cues = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").replace("\r", "\n")):
        lines = [line for line in block.split("\n") if line.strip()]
        if not lines:
            continue
        timing = next((i for i, line in enumerate(lines) if _TIMING.search(line)), None)
        if timing is not None:
            body = lines[timing + 1:]
        elif lines[0].lstrip("\ufeff").split(" ")[0].split("\t")[0] in _VTT_BLOCKS:
            continue
        else:
            body = [line for line in lines if not line.strip().isdigit()]
        cue = _clean_cue(body)
        if cue:
            cues.append(cue)
    return cues


def cue_texts(text: str) -> list[str]:
    """The text of every cue, markup removed (format told by content: ASS/SSA, SAMI, else SRT/VTT)."""
    head = text[:4000].casefold()
    if "[events]" in head or "[script info]" in head or re.search(r"(?m)^dialogue:", head):
        return _ass_cues(text)
    if "<sami" in head or "<sync" in head:
        return _sami_cues(text)
    return _block_cues(text)


# ------------------------------------------------------------------------------------------- hearing impaired

_DESCRIPTION = re.compile(r"^[\[(][^\])]{2,80}[\])]")
_SPEAKER = re.compile(r"^[-–—]?\s*[A-ZА-ЯЁ][A-ZА-ЯЁ0-9 .'’-]{1,30}:(\s|$)")
_MUSIC = re.compile(r"[♪♫#]")


def _is_sdh(cue: str) -> bool:
    for line in cue.split("\n"):
        line = line.lstrip("-–— ")
        if _DESCRIPTION.match(line) or _SPEAKER.match(line):
            return True
        if _MUSIC.search(line) and not any(ch.isalpha() for ch in _MUSIC.sub("", line)):
            return True       # a music note alone marks music for deaf viewers; lyrics do not count
    return False


def cue_stats(cues: list[str]) -> CueStats:
    """Count cues, their letters, and the cues that only hearing-impaired subtitles carry."""
    letters = sum(1 for cue in cues for ch in cue if ch.isalpha())
    return CueStats(len(cues), letters, sum(1 for cue in cues if _is_sdh(cue)))
