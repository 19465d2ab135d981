"""A tolerant, bounded bencode decoder that also reports where the top-level `info` value lies.

Why not only `bencode2`: it is strict (it refuses unsorted or duplicated dict keys and
leading zeros), while libtorrent - and so qBittorrent - accepts unsorted keys and leading
zeros and hashes the `info` bytes exactly as they appear in the file. Real files need this:
`torrentfile` writes the `piece layers` keys of multi-file v2 torrents unsorted, bencode2
refuses them, qBittorrent adds them. bencode2 also gives no byte offsets, and the infohash
must be computed over the raw span, never over a re-encoding. The tests check this decoder
against bencode2 on everything bencode2 accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

BValue = int | bytes | list["BValue"] | dict[bytes, "BValue"]

MAX_DEPTH = 100              # libtorrent's default max_decode_depth
MAX_TOKENS = 3_000_000       # libtorrent's default max_decode_tokens
_MAX_INT_DIGITS = 19         # libtorrent parses integers into int64
_MAX_LENGTH_DIGITS = 10


class BencodeError(ValueError):
    """The bytes are not well-formed bencode; the message says what and where."""


@dataclass(frozen=True)
class Decoded:
    """The decoded document and the byte span of its top-level `info` value, if it has one."""

    value: BValue
    info_span: tuple[int, int] | None


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.tokens = 0
        self.info_span: tuple[int, int] | None = None

    def fail(self, what: str) -> BencodeError:
        return BencodeError(f"{what} at byte {self.pos}")

    def value(self, depth: int) -> BValue:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        self.tokens += 1
        if self.tokens > MAX_TOKENS:
            raise self.fail("too many elements")
        if self.pos >= len(self.data):
            raise self.fail("unexpected end of data")
        lead = self.data[self.pos]
        if lead == 0x69:  # i
            return self.integer()
        if 0x30 <= lead <= 0x39:
            return self.string()
        if lead == 0x6C:  # l
            self.pos += 1
            items: list[BValue] = []
            while self.peek() != 0x65:  # e
                items.append(self.value(depth + 1))
            self.pos += 1
            return items
        if lead == 0x64:  # d
            return self.dictionary(depth)
        raise self.fail(f"unexpected byte {bytes([lead])!r}")

    def peek(self) -> int:
        if self.pos >= len(self.data):
            raise self.fail("unexpected end of data")
        return self.data[self.pos]

    def integer(self) -> int:
        end = self.data.find(b"e", self.pos + 1, self.pos + 3 + _MAX_INT_DIGITS)
        if end < 0:
            raise self.fail("unterminated or oversized integer")
        text = self.data[self.pos + 1 : end]
        digits = text[1:] if text[:1] == b"-" else text
        if not digits or not digits.isdigit():
            raise self.fail("malformed integer")
        self.pos = end + 1
        return int(text)

    def string(self) -> bytes:
        colon = self.data.find(b":", self.pos, self.pos + _MAX_LENGTH_DIGITS + 1)
        if colon < 0 or not self.data[self.pos : colon].isdigit():
            raise self.fail("malformed string length")
        length = int(self.data[self.pos : colon])
        start = colon + 1
        if start + length > len(self.data):
            raise self.fail("string runs past the end of the data")
        self.pos = start + length
        return self.data[start : self.pos]

    def dictionary(self, depth: int) -> dict[bytes, BValue]:
        self.pos += 1
        result: dict[bytes, BValue] = {}
        while self.peek() != 0x65:  # e
            if not 0x30 <= self.data[self.pos] <= 0x39:
                raise self.fail("dictionary key is not a string")
            self.tokens += 1
            key = self.string()
            if key in result:
                raise self.fail(f"duplicated dictionary key {key[:40]!r}")
            start = self.pos
            result[key] = self.value(depth + 1)
            if depth == 0 and key == b"info":
                self.info_span = (start, self.pos)
        self.pos += 1
        return result


def decode(data: bytes) -> Decoded:
    """Decode one bencoded document (trailing bytes are an error); raises BencodeError."""
    reader = _Reader(bytes(data))
    if not reader.data:
        raise BencodeError("the data is empty")
    value = reader.value(0)
    if reader.pos != len(reader.data):
        raise reader.fail("unexpected data after the end")
    return Decoded(value, reader.info_span)
