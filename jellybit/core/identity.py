"""Torrent identity: magnets, bare infohashes, http(s) URLs and `.torrent` bytes -> infohashes.

Pure functions. Every malformed input raises InvalidSource with a sentence a user can act on;
nothing else escapes. The rules follow libtorrent (what qBittorrent runs), checked against a
real qBittorrent 4.5.2 / libtorrent 2.0.8: v1 = SHA-1 and v2 = SHA-256 of the raw `info`
bytes, files listed as qBittorrent lists them (`name/...` for multi-file torrents).
"""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import parse_qsl, urlsplit

from jellybit.core import bencoding
from jellybit.core.models import Infohash
from jellybit.core.records import SourceFile
from jellybit.errors import InvalidSource

MAX_MAGNET_CHARS = 64 * 1024
MAX_URL_CHARS = 8 * 1024
MAX_TORRENT_NAME_CHARS = 1024

_HEX40 = re.compile(r"[0-9a-fA-F]{40}")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_BASE32 = re.compile(r"[A-Za-z2-7]{32}")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
# libtorrent drops these from file names: they flip the writing direction ("gpj.exe" tricks).
_BIDI = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u200e\u200f"))


class SourceKind(StrEnum):
    """Where a download came from (stored as `download.source_type`)."""

    MAGNET = "magnet"
    URL = "url"
    INFOHASH = "infohash"
    TORRENT = "torrent"
    ADOPTED = "adopted"


@dataclass(frozen=True)
class Source:
    """A parsed text source; `uri` is what to hand qBittorrent (a magnet or the URL)."""

    kind: SourceKind
    uri: str
    infohashes: tuple[Infohash, ...] = ()
    display_name: str = ""
    trackers: tuple[str, ...] = ()
    web_seeds: tuple[str, ...] = ()     # a magnet's ws= (HTTP sources libtorrent downloads from)
    peers: tuple[str, ...] = ()         # a magnet's x.pe= (host:port peers libtorrent connects to)


@dataclass(frozen=True)
class TorrentMeta:
    """What a `.torrent` file says: name, files (padding excluded), size and infohashes."""

    name: str
    files: tuple[SourceFile, ...]
    total_size: int
    infohashes: tuple[Infohash, ...]
    trackers: tuple[str, ...] = ()
    web_seeds: tuple[str, ...] = ()     # url-list and httpseeds

    @property
    def v1(self) -> str | None:
        """The v1 infohash (40 hex), if the torrent has v1 metadata."""
        return next((h.value for h in self.infohashes if h.kind == "v1"), None)

    @property
    def v2(self) -> str | None:
        """The full v2 infohash (64 hex), if the torrent is v2 or hybrid."""
        return next((h.value for h in self.infohashes if h.kind == "v2"), None)


def _shown(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _size_text(size: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


def infohash_from_hex(value: str) -> Infohash:
    """Return the Infohash of a 40-hex (v1) or 64-hex (v2) string; InvalidSource otherwise."""
    if isinstance(value, str):
        if _HEX40.fullmatch(value):
            return Infohash(value.lower(), "v1")
        if _HEX64.fullmatch(value):
            return Infohash(value.lower(), "v2")
    raise InvalidSource(f"not an infohash (40 or 64 hex digits): {_shown(str(value))}")


def magnet_for(infohashes: Iterable[Infohash]) -> str:
    """Build a minimal magnet for these hashes (used for bare infohash sources)."""
    parts = [
        f"xt=urn:btih:{h.value}" if h.kind == "v1" else f"xt=urn:btmh:1220{h.value}"
        for h in infohashes
    ]
    return "magnet:?" + "&".join(parts)


# ---------------------------------------------------------------- text sources


def parse_source(text: str) -> Source:
    """Parse a magnet link, a bare infohash (40 hex = v1, 64 hex = v2) or an http(s) URL."""
    if not isinstance(text, str):
        raise InvalidSource("the source must be text (a magnet link, an http(s) URL or an infohash)")
    text = text.strip()
    if not text:
        raise InvalidSource("the source is empty: give a magnet link, an http(s) URL or an infohash")
    if len(text) > MAX_MAGNET_CHARS:
        raise InvalidSource(f"the source is longer than {MAX_MAGNET_CHARS} characters")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in text):
        raise InvalidSource("the source contains control characters")
    if text[:7].lower() == "magnet:":
        return _parse_magnet(text)
    if _HEX40.fullmatch(text) or _HEX64.fullmatch(text):
        infohash = infohash_from_hex(text)
        return Source(SourceKind.INFOHASH, magnet_for([infohash]), (infohash,))
    scheme = _SCHEME.match(text)
    if scheme:
        return _parse_url(text, scheme.group(1).lower())
    raise InvalidSource(f"not a magnet link, an http(s) URL or an infohash: {_shown(text)}")


def _parse_url(text: str, scheme: str) -> Source:
    if scheme not in ("http", "https"):
        raise InvalidSource(f"unsupported URL scheme {_shown(scheme, 20)} (only http and https)")
    if len(text) > MAX_URL_CHARS:
        raise InvalidSource(f"the URL is longer than {MAX_URL_CHARS} characters")
    if any(c.isspace() for c in text):
        raise InvalidSource("the URL contains spaces (percent-encode them as %20)")
    try:
        parts = urlsplit(text)
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError as exc:
        raise InvalidSource(f"malformed URL {_shown(text)}: {exc}") from None
    if not parts.hostname:
        raise InvalidSource(f"the URL has no host: {_shown(text)}")
    return Source(SourceKind.URL, text)


def _btih(value: str) -> Infohash:
    if _HEX40.fullmatch(value):
        return Infohash(value.lower(), "v1")
    if _BASE32.fullmatch(value):
        return Infohash(base64.b32decode(value.upper()).hex(), "v1")
    raise InvalidSource(
        f"magnet link has a malformed v1 infohash {_shown(value)} (expected 40 hex or 32 base32 characters)"
    )


def _btmh(value: str) -> Infohash:
    if len(value) == 68 and value[:4] == "1220" and _HEX64.fullmatch(value[4:]):
        return Infohash(value[4:].lower(), "v2")
    raise InvalidSource(
        f"magnet link has a malformed v2 infohash {_shown(value)} (expected 1220 and 64 hex digits)"
    )


def _parse_magnet(text: str) -> Source:
    if text[7:8] != "?":
        raise InvalidSource("malformed magnet link: expected 'magnet:?xt=urn:btih:…'")
    pairs = parse_qsl(text[8:], keep_blank_values=True, encoding="utf-8", errors="replace")
    found: dict[str, Infohash] = {}
    names: list[str] = []
    trackers: list[str] = []
    others: dict[str, list[str]] = {"ws": [], "x.pe": []}
    for key, value in pairs:
        value = value.strip()
        if key == "xt":
            prefix = value[:9].lower()
            if prefix == "urn:btih:":
                infohash = _btih(value[9:])
            elif prefix == "urn:btmh:":
                infohash = _btmh(value[9:])
            else:
                continue  # other networks' hashes (ed2k, sha1) are not ours to judge
            previous = found.setdefault(infohash.kind, infohash)
            if previous != infohash:
                raise InvalidSource(f"magnet link carries two different {infohash.kind} infohashes")
        elif key == "dn":
            names.append(value)
        elif key == "tr" and value and value not in trackers:
            trackers.append(value)
        elif key in others and value and value not in others[key]:
            others[key].append(value)
    if not found:
        raise InvalidSource("magnet link has no BitTorrent infohash (xt=urn:btih:… or xt=urn:btmh:1220…)")
    hashes = tuple(found[kind] for kind in ("v1", "v2") if kind in found)
    name = next((cleaned for n in names if (cleaned := clean_name(n))), "")
    return Source(SourceKind.MAGNET, text, hashes, name, tuple(trackers), tuple(others["ws"]),
                  tuple(others["x.pe"]))


def clean_name(text: str) -> str:
    """A display name: control and direction-changing characters removed, trimmed, bounded."""
    kept = "".join(c for c in text.translate(_BIDI) if unicodedata.category(c) not in ("Cc", "Cs"))
    return kept.strip()[:MAX_TORRENT_NAME_CHARS]


# ---------------------------------------------------------------- .torrent files


def _bad(message: str) -> InvalidSource:
    return InvalidSource(f"malformed torrent: {message}")


def _text(raw: bytes) -> str:
    # libtorrent shows each invalid UTF-8 byte as "_"; mimic it so paths match qBittorrent's.
    return raw.decode("utf-8", "replace").replace("\ufffd", "_").translate(_BIDI)


def _component(raw: object, where: str) -> str:
    if not isinstance(raw, bytes):
        raise _bad(f"{where} is missing or not a string")
    part = _text(raw)
    if part in ("", ".", "..") or any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in part):
        raise InvalidSource(f"torrent contains an unsafe file name {_shown(part)} in {where}")
    return part


def _pick(mapping: dict[bytes, object], key: bytes) -> object:
    utf8 = mapping.get(key + b".utf-8")
    return utf8 if utf8 is not None else mapping.get(key)


def _length(raw: object, where: str) -> int:
    if not isinstance(raw, int) or raw < 0:
        raise _bad(f"{where} has no valid length")
    return raw


def _v1_files(info: dict[bytes, object], name: str) -> tuple[list[SourceFile], int]:
    """Return the v1 listing (padding excluded) and the v1 payload size including padding."""
    entries = info.get(b"files")
    if entries is None:
        size = _length(info.get(b"length"), "the torrent")
        return [SourceFile(name, size)], size
    if not isinstance(entries, list):
        raise _bad("'files' is not a list")
    files: list[SourceFile] = []
    payload = 0
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise _bad(f"file #{index} is not a dictionary")
        size = _length(entry.get(b"length"), f"file #{index}")
        payload += size
        attr = entry.get(b"attr")
        path = _pick(entry, b"path")
        if not isinstance(path, list):
            path = []
        raw_parts = [p for p in path if isinstance(p, bytes)]
        if (isinstance(attr, bytes) and b"p" in attr) or raw_parts[:1] == [b".pad"] or any(
            b"_____padding_file_" in p for p in raw_parts
        ):
            continue
        if not path:
            raise _bad(f"file #{index} has no path")
        parts = [_component(p, f"file #{index}") for p in path]
        files.append(SourceFile("/".join([name, *parts]), size))
    return files, payload


def _v2_files(tree: object, name: str, has_v1_list: bool) -> list[SourceFile]:
    files: list[SourceFile] = []

    def walk(node: object, parts: list[str], depth: int) -> None:
        if not isinstance(node, dict) or depth > 100:
            raise _bad("the v2 file tree is malformed")
        for key, child in node.items():
            if not isinstance(child, dict) or key == b"":
                raise _bad("the v2 file tree is malformed")
            part = _component(key, "the v2 file tree")
            if len(child) == 1 and b"" in child:
                leaf = child[b""]
                where = "/".join([*parts, part])
                if not isinstance(leaf, dict):
                    raise _bad(f"v2 file {_shown(where)} is malformed")
                attr = leaf.get(b"attr")
                if isinstance(attr, bytes) and b"p" in attr:
                    raise _bad("the v2 file tree contains a padding file")
                size = _length(leaf.get(b"length"), f"v2 file {_shown(where)}")
                root = leaf.get(b"pieces root")
                if size > 0 and not (isinstance(root, bytes) and len(root) == 32 and any(root)):
                    raise _bad(f"v2 file {_shown(where)} has no valid 'pieces root'")
                single = depth == 0 and not has_v1_list and len(node) == 1
                files.append(SourceFile(part if single else "/".join([name, *parts, part]), size))
            else:
                walk(child, [*parts, part], depth + 1)

    walk(tree, [], 0)
    return files


def _check_pieces(info: dict[bytes, object], payload: int, piece_length: int) -> None:
    pieces = info.get(b"pieces")
    if not isinstance(pieces, bytes):
        raise _bad("'pieces' (the SHA-1 piece hashes) is missing")
    expected = -(-payload // piece_length)
    if len(pieces) % 20 or len(pieces) // 20 != expected:
        raise _bad(f"'pieces' holds {len(pieces)} bytes, expected {expected} SHA-1 hashes of 20 bytes")


def _trackers(meta: dict[bytes, object]) -> tuple[str, ...]:
    found: list[str] = []
    candidates: list[object] = [meta.get(b"announce")]
    tiers = meta.get(b"announce-list")
    if isinstance(tiers, list):
        for tier in tiers:
            candidates.extend(tier if isinstance(tier, list) else [tier])
    for raw in candidates:
        if isinstance(raw, bytes) and (url := clean_name(_text(raw))) and url not in found:
            found.append(url)
    return tuple(found)


def _web_seeds(meta: dict[bytes, object]) -> tuple[str, ...]:
    found: list[str] = []
    for key in (b"url-list", b"httpseeds"):
        raw = meta.get(key)
        for item in raw if isinstance(raw, list) else [raw]:
            if isinstance(item, bytes) and (url := clean_name(_text(item))) and url not in found:
                found.append(url)
    return tuple(found)


def _what_it_looks_like(data: bytes) -> str:
    """A plain-words guess at what a file that is not bencoded is (the common mistakes)."""
    if not data.strip():
        return "the file is empty"
    head = data[:512].lstrip().lower()
    if head.startswith((b"<!doctype", b"<html", b"<?xml", b"<head", b"<body")):
        return "it is a web page (HTML), not a .torrent; the site may want a login or show an error"
    if head.startswith(b"magnet:"):
        return "it is a magnet link saved as text; add the link itself instead"
    if head.startswith((b"{", b"[")):
        return "it is JSON or other text, not a .torrent"
    return "it is not a bencoded dictionary, which every .torrent file is"


def parse_torrent(data: bytes, max_bytes: int) -> TorrentMeta:
    """Parse `.torrent` bytes (at most max_bytes) into name, files, size and infohashes."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidSource("not a torrent file: expected bytes")
    data = bytes(data)
    if len(data) > max_bytes:
        raise InvalidSource(f"torrent is larger than the {_size_text(max_bytes)} limit")
    if data[:1] != b"d":
        raise InvalidSource(f"not a torrent file: {_what_it_looks_like(data)}")
    try:
        decoded = bencoding.decode(data)
    except bencoding.BencodeError as exc:
        raise InvalidSource(f"not a torrent file: it is damaged or cut short ({exc})") from None
    meta = decoded.value
    if not isinstance(meta, dict):
        raise InvalidSource("not a torrent file: it is not a bencoded dictionary")
    info = meta.get(b"info")
    if not isinstance(info, dict) or decoded.info_span is None:
        raise InvalidSource("not a torrent file: it has no 'info' dictionary")
    version = info.get(b"meta version", 1)
    if not isinstance(version, int) or version < 1:
        raise _bad("'meta version' is not a positive integer")
    if version > 2:
        raise InvalidSource(f"unsupported torrent version {version} (only BitTorrent v1 and v2)")
    piece_length = info.get(b"piece length")
    if not isinstance(piece_length, int) or piece_length <= 0:
        raise _bad("'piece length' is missing or not positive")
    if version == 2 and (piece_length < 16384 or piece_length & (piece_length - 1)):
        raise _bad("a v2 'piece length' must be a power of two of at least 16 KiB")
    name = _component(_pick(info, b"name"), "the torrent name")

    has_v1_list = b"files" in info or b"length" in info
    v1_files, payload = _v1_files(info, name) if has_v1_list else ([], 0)
    if version == 2:
        if b"file tree" not in info:
            raise _bad("a v2 torrent needs a 'file tree'")
        files = _v2_files(info[b"file tree"], name, b"files" in info)
    elif b"file tree" in info:
        raise _bad("'file tree' without 'meta version' 2")
    elif not has_v1_list:
        raise _bad("it has neither 'length' nor 'files'")
    else:
        files = v1_files
    if not files:
        raise _bad("it lists no files")
    paths = [f.path for f in files]
    if len(set(paths)) != len(paths):
        raise _bad("it lists the same file twice")
    total = sum(f.size for f in files)
    if total == 0:
        raise _bad("it holds no data (every file is empty)")
    if version == 2 and has_v1_list and v1_files != files:
        raise _bad("the v1 and v2 file lists of this hybrid torrent disagree")
    # libtorrent requires v1 piece hashes only without 'meta version' 2, and checks them if present.
    if version < 2 or (has_v1_list and b"pieces" in info):
        _check_pieces(info, payload, piece_length)

    start, end = decoded.info_span
    raw_info = data[start:end]
    hashes: list[Infohash] = []
    # libtorrent keeps a v1 hash for v2 torrents that also carry 'files' or 'length' (hybrids).
    if version < 2 or has_v1_list:
        hashes.append(Infohash(hashlib.sha1(raw_info).hexdigest(), "v1"))
    if version == 2:
        hashes.append(Infohash(hashlib.sha256(raw_info).hexdigest(), "v2"))
    return TorrentMeta(name, tuple(files), total, tuple(hashes), _trackers(meta), _web_seeds(meta))

