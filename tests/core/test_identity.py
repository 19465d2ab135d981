"""Torrent identity: magnets, bare infohashes, URLs and real .torrent files (v1, v2, hybrid)."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from urllib.parse import quote

import bencode2
import pytest
import torf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torrentfile.torrent import TorrentFileHybrid, TorrentFileV2

from jellybit.core import bencoding
from jellybit.core.identity import (
    MAX_MAGNET_CHARS,
    Source,
    SourceKind,
    TorrentMeta,
    clean_name,
    infohash_from_hex,
    parse_source,
    parse_torrent,
)
from jellybit.core.models import Infohash
from jellybit.errors import InvalidSource
from tests.support.qbittorrent import QbittorrentInstance, wait_for
from tests.support.torrents import make_content

LIMIT = 10 * 1024 * 1024
V1 = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
V2 = "a" * 24 + "0123456789abcdef" * 2 + "b" * 8
SERIES = {"e01.mkv": 70_000, "sub/e01.srt": 1_000, "e02.mkv": 40_000}


def torrent_v1(content: Path) -> tuple[bytes, str]:
    """A torf v1 torrent and the infohash torf computes."""
    torrent = torf.Torrent(path=content, trackers=[], private=False, created_by=None)
    torrent.generate()
    return torrent.dump(), torrent.infohash


def torrent_v2(content: Path, kind: str) -> tuple[bytes, dict]:
    """A torrentfile v2/hybrid torrent and the `info` dict torrentfile built in memory."""
    out = content.parent / f".{content.name}.{kind}.torrent"
    maker = (TorrentFileHybrid if kind == "hybrid" else TorrentFileV2)(
        path=os.fspath(content), outfile=os.fspath(out), progress=0
    )
    _, meta = maker.write()
    data = out.read_bytes()
    out.unlink()
    return data, meta["info"]


def hand(info: dict, **top: object) -> bytes:
    """A hand-made torrent (canonical bencode) around an info dict."""
    return bencode2.bencode({"info": info, **top})


def v1_info(**changes: object) -> dict:
    """A small valid single-file v1 info dict, with some keys changed or removed (None)."""
    info: dict = {"name": b"film.mkv", "length": 5, "piece length": 16384, "pieces": b"p" * 20}
    info.update(changes)
    return {k: v for k, v in info.items() if v is not None}


def multi_info(paths: list[list[bytes]], **changes: object) -> dict:
    """A valid multi-file v1 info dict with these paths of 5 bytes each."""
    files = [{"length": 5, "path": p} for p in paths]
    pieces = -(-5 * len(files) // 16384) * 20
    return v1_info(length=None, files=files, name=b"top", pieces=b"p" * pieces, **changes)


# ---------------------------------------------------------------- magnets


def test_magnet_hex_v1_with_cyrillic_name_and_trackers() -> None:
    """dn is percent-decoded (Cyrillic, '+' = space), tr keeps order without duplicates."""
    link = (
        f"magnet:?xt=urn:btih:{V1.upper()}&dn=%D0%A1%D0%B5%D1%80%D0%B8%D0%B0%D0%BB+S01"
        "&tr=udp%3A%2F%2Ftracker.example%3A80%2Fannounce&tr=http://t2.example/a?x=1"
        "&tr=udp%3A%2F%2Ftracker.example%3A80%2Fannounce"
    )
    source = parse_source(f"  {link}\n")
    assert source == Source(
        SourceKind.MAGNET, link, (Infohash(V1, "v1"),), "Сериал S01",
        ("udp://tracker.example:80/announce", "http://t2.example/a?x=1"),
    )


def test_magnet_raw_cyrillic_and_percent_encoded_name() -> None:
    """A name pasted unencoded and one percent-encoded mean the same."""
    raw = parse_source(f"magnet:?xt=urn:btih:{V1}&dn=Фильм (2020) 1080p")
    encoded = parse_source(f"magnet:?xt=urn:btih:{V1}&dn={quote('Фильм (2020) 1080p')}")
    assert raw.display_name == encoded.display_name == "Фильм (2020) 1080p"


def test_magnet_base32_equals_hex() -> None:
    """A 32-character base32 btih is the same v1 hash as its hex form."""
    b32 = base64.b32encode(bytes.fromhex(V1)).decode().lower()
    assert parse_source(f"magnet:?xt=urn:btih:{b32}").infohashes == (Infohash(V1, "v1"),)


def test_magnet_v2_and_hybrid() -> None:
    """btmh 1220… is a v2 hash; a hybrid magnet carries both, v1 listed first."""
    v2 = parse_source(f"magnet:?xt=urn:btmh:1220{V2.upper()}&dn=x")
    assert v2.infohashes == (Infohash(V2, "v2"),)
    hybrid = parse_source(f"magnet:?xt=urn:btmh:1220{V2}&xt=urn:btih:{V1}&xt=urn:btih:{V1}")
    assert hybrid.infohashes == (Infohash(V1, "v1"), Infohash(V2, "v2"))


def test_magnet_ignores_other_networks_but_needs_a_bittorrent_hash() -> None:
    """Foreign xt values are ignored; without a BitTorrent one the magnet is refused."""
    mixed = parse_source(f"magnet:?xt=urn:ed2k:31D6CFE0D16AE931B73C59D7E0C089C0&xt=urn:btih:{V1}")
    assert mixed.infohashes == (Infohash(V1, "v1"),)
    with pytest.raises(InvalidSource, match=r"no BitTorrent infohash \(xt=urn:btih:"):
        parse_source("magnet:?xt=urn:ed2k:31D6CFE0D16AE931B73C59D7E0C089C0&dn=x")
    with pytest.raises(InvalidSource, match="no BitTorrent infohash"):
        parse_source("magnet:?dn=only+a+name")


@pytest.mark.parametrize(
    ("link", "message"),
    [
        ("magnet:?xt=urn:btih:" + "a" * 39, "malformed v1 infohash"),
        ("magnet:?xt=urn:btih:" + "g" * 40, "malformed v1 infohash"),
        ("magnet:?xt=urn:btih:" + "a" * 64, "malformed v1 infohash"),
        ("magnet:?xt=urn:btmh:1114" + "a" * 40, "malformed v2 infohash"),
        ("magnet:?xt=urn:btmh:1220" + "a" * 63, "malformed v2 infohash"),
        (f"magnet:?xt=urn:btih:{V1}&xt=urn:btih:{'b' * 40}", "two different v1 infohashes"),
        (f"magnet:xt=urn:btih:{V1}", "malformed magnet link"),
        (f"magnet:?xt=urn:btih:{V1}&dn=a\x00b", "control characters"),
        (f"magnet:?xt=urn:btih:{V1}&dn=\ud800", "control characters"),
        (f"magnet:?xt=urn:btih:{V1}&tr=" + "x" * MAX_MAGNET_CHARS, "longer than"),
    ],
)
def test_malformed_magnets(link: str, message: str) -> None:
    """Each malformed magnet gets its own readable reason."""
    with pytest.raises(InvalidSource, match=message):
        parse_source(link)


def test_magnet_name_is_cleaned() -> None:
    """Direction-changing and control characters never reach the display name."""
    source = parse_source(f"magnet:?xt=urn:btih:{V1}&dn=%E2%80%AEvid%0A.mkv&dn=second")
    assert source.display_name == "vid.mkv"


# ---------------------------------------------------------------- bare hashes and URLs


def test_bare_infohashes() -> None:
    """40 hex is a v1 hash, 64 hex a v2 hash; both become a minimal magnet for qBittorrent."""
    v1 = parse_source(V1.upper())
    assert v1 == Source(SourceKind.INFOHASH, f"magnet:?xt=urn:btih:{V1}", (Infohash(V1, "v1"),))
    v2 = parse_source(V2)
    assert v2 == Source(SourceKind.INFOHASH, f"magnet:?xt=urn:btmh:1220{V2}", (Infohash(V2, "v2"),))
    assert parse_source(v2.uri).infohashes == v2.infohashes
    with pytest.raises(InvalidSource, match="not a magnet link"):
        parse_source(V1 + "a")


def test_http_urls_are_accepted_unfetched() -> None:
    """http(s) URLs pass through unchanged (qBittorrent fetches them), without hashes yet."""
    for url in ("https://tracker.example/dl/123.torrent?key=a%20b", "HTTP://[::1]:8080/x.torrent",
                "http://пример.рф/файл.torrent"):
        assert parse_source(url) == Source(SourceKind.URL, url)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ftp://example.org/x.torrent", "unsupported URL scheme 'ftp'"),
        ("file:///etc/passwd", "unsupported URL scheme 'file'"),
        ("javascript:alert(1)", "unsupported URL scheme 'javascript'"),
        ("http://", "no host"),
        ("http://host:99999/x", "malformed URL"),
        ("http://[::1/x", "malformed URL"),
        ("http://host/a b.torrent", "spaces"),
        ("https://host/" + "a" * 9000, "longer than"),
        ("", "empty"),
        ("   ", "empty"),
        ("just some words", "not a magnet link, an http\\(s\\) URL or an infohash"),
    ],
)
def test_bad_text_sources(text: str, message: str) -> None:
    """Unsupported schemes, broken URLs and plain text are refused with a reason."""
    with pytest.raises(InvalidSource, match=message):
        parse_source(text)


def test_non_text_source() -> None:
    """A transport that passes something other than text gets the domain error too."""
    with pytest.raises(InvalidSource, match="must be text"):
        parse_source(b"magnet:?xt=urn:btih:" + V1.encode())  # type: ignore[arg-type]


def test_infohash_from_hex() -> None:
    """The helper the worker uses for adoption validates and classifies."""
    assert infohash_from_hex(V1.upper()) == Infohash(V1, "v1")
    assert infohash_from_hex(V2) == Infohash(V2, "v2")
    with pytest.raises(InvalidSource):
        infohash_from_hex(V1[:-1])


# ---------------------------------------------------------------- properties (text)

hashes20 = st.binary(min_size=20, max_size=20)
hashes32 = st.binary(min_size=32, max_size=32)


@given(st.text(max_size=300))
def test_any_text_is_a_source_or_invalid_source(text: str) -> None:
    """Arbitrary text never raises anything but InvalidSource."""
    try:
        parse_source(text)
    except InvalidSource:
        pass


@given(st.text(alphabet="magnet:?xt=urn:btihm1220&dntr%+ABCDEF0123456789abcdef", max_size=200))
def test_magnet_like_text_is_a_source_or_invalid_source(text: str) -> None:
    """Text made of magnet pieces (reaching the deeper branches) never crashes."""
    try:
        parse_source("magnet:?" + text)
    except InvalidSource:
        pass


@given(hashes20)
def test_base32_and_hex_agree(raw: bytes) -> None:
    """Any 20 bytes give the same hash as base32 (either case) and as hex."""
    b32 = base64.b32encode(raw).decode()
    expected = (Infohash(raw.hex(), "v1"),)
    assert parse_source(f"magnet:?xt=urn:btih:{b32}").infohashes == expected
    assert parse_source(f"magnet:?xt=urn:btih:{b32.lower()}").infohashes == expected
    assert parse_source(f"magnet:?xt=urn:btih:{raw.hex().upper()}").infohashes == expected


@given(
    v1=st.none() | hashes20,
    v2=st.none() | hashes32,
    name=st.text(max_size=40),
    trackers=st.lists(st.text(min_size=1, max_size=30), max_size=4),
)
def test_built_magnets_parse_back(v1: bytes | None, v2: bytes | None, name: str,
                                  trackers: list[str]) -> None:
    """A magnet built from random hashes, name and trackers parses back to exactly those."""
    parts = []
    if v2 is not None:
        parts.append(f"xt=urn:btmh:1220{v2.hex()}")
    if v1 is not None:
        parts.append(f"xt=urn:btih:{v1.hex()}")
    parts.append("dn=" + quote(name, safe=""))
    parts.extend("tr=" + quote(t, safe="") for t in trackers)
    link = "magnet:?" + "&".join(parts)
    if v1 is None and v2 is None:
        with pytest.raises(InvalidSource, match="no BitTorrent infohash"):
            parse_source(link)
        return
    source = parse_source(link)
    expected = [Infohash(v1.hex(), "v1")] if v1 is not None else []
    expected += [Infohash(v2.hex(), "v2")] if v2 is not None else []
    assert source.kind is SourceKind.MAGNET
    assert source.uri == link
    assert source.infohashes == tuple(expected)
    assert source.display_name == clean_name(name)
    wanted: list[str] = []
    for tracker in trackers:
        if tracker.strip() and tracker.strip() not in wanted:
            wanted.append(tracker.strip())
    assert source.trackers == tuple(wanted)


# ---------------------------------------------------------------- real .torrent files


def test_v1_multi_file_matches_torf(tmp_path: Path) -> None:
    """v1 hash equals torf's; paths carry the top folder like qBittorrent lists them."""
    data, expected = torrent_v1(make_content(tmp_path, "Сериал S01", SERIES))
    meta = parse_torrent(data, LIMIT)
    assert meta.infohashes == (Infohash(expected, "v1"),)
    assert meta.v1 == expected
    assert meta.v2 is None
    assert meta.name == "Сериал S01"
    assert {(f.path, f.size) for f in meta.files} == {
        ("Сериал S01/e01.mkv", 70_000), ("Сериал S01/sub/e01.srt", 1_000), ("Сериал S01/e02.mkv", 40_000)
    }
    assert meta.total_size == 111_000


def test_v1_single_file(tmp_path: Path) -> None:
    """A single-file torrent lists just the file name."""
    content = make_content(tmp_path, "one", {"Film.2020.mkv": 50_000})
    data, expected = torrent_v1(content / "Film.2020.mkv")
    meta = parse_torrent(data, LIMIT)
    assert meta.v1 == expected
    assert [(f.path, f.size) for f in meta.files] == [("Film.2020.mkv", 50_000)]


@pytest.mark.parametrize("kind", ["v2", "hybrid"])
def test_v2_and_hybrid_multi_file(tmp_path: Path, kind: str) -> None:
    """v2 = SHA-256 (and hybrid also SHA-1) of the info dict, computed here independently."""
    data, info = torrent_v2(make_content(tmp_path, "Сериал S01", SERIES), kind)
    canonical = bencode2.bencode(info)
    meta = parse_torrent(data, LIMIT)
    assert meta.v2 == hashlib.sha256(canonical).hexdigest()
    assert meta.v1 == (hashlib.sha1(canonical).hexdigest() if kind == "hybrid" else None)
    assert [h.kind for h in meta.infohashes] == (["v1", "v2"] if kind == "hybrid" else ["v2"])
    assert all(len(h.value) == {"v1": 40, "v2": 64}[h.kind] for h in meta.infohashes)
    assert [(f.path, f.size) for f in meta.files] == [
        ("Сериал S01/e01.mkv", 70_000), ("Сериал S01/e02.mkv", 40_000), ("Сериал S01/sub/e01.srt", 1_000)
    ]
    assert meta.total_size == 111_000


def test_hybrid_single_file(tmp_path: Path) -> None:
    """A single-file hybrid lists the file without a folder and has both hashes."""
    content = make_content(tmp_path, "one", {"Film.2020.mkv": 50_000})
    data, info = torrent_v2(content / "Film.2020.mkv", "hybrid")
    meta = parse_torrent(data, LIMIT)
    canonical = bencode2.bencode(info)
    assert (meta.v1, meta.v2) == (hashlib.sha1(canonical).hexdigest(), hashlib.sha256(canonical).hexdigest())
    assert [(f.path, f.size) for f in meta.files] == [("Film.2020.mkv", 50_000)]


def test_torrentfile_v2_is_not_canonical_but_parses(tmp_path: Path) -> None:
    """torrentfile writes unsorted 'piece layers' keys: bencode2 refuses it, qBittorrent and we don't."""
    data, _ = torrent_v2(make_content(tmp_path, "multi", SERIES), "v2")
    with pytest.raises(bencode2.BencodeDecodeError):
        bencode2.bdecode(data)
    assert parse_torrent(data, LIMIT).v2 is not None


def test_non_canonical_info_hashes_the_raw_bytes() -> None:
    """Unsorted keys and a leading zero inside info: the hash is of the bytes as written."""
    info = b"d4:name5:y.bin6:lengthi05e12:piece lengthi16384e6:pieces20:" + b"a" * 20 + b"e"
    data = b"d8:announce9:http://t/4:info" + info + b"7:comment2:hie"
    with pytest.raises(bencode2.BencodeDecodeError):
        bencode2.bdecode(data)
    meta = parse_torrent(data, LIMIT)
    assert meta.infohashes == (Infohash(hashlib.sha1(info).hexdigest(), "v1"),)
    # A client that re-encoded the info dict would get another (wrong) hash.
    assert meta.v1 != hashlib.sha1(bencode2.bencode(bencoding.decode(info).value)).hexdigest()
    assert (meta.name, meta.total_size, meta.trackers) == ("y.bin", 5, ("http://t/",))


def test_padding_files_are_excluded() -> None:
    """BEP 47 padding (attr 'p'), a bare .pad/ path and BitComet padding are not content."""
    files = [
        {"length": 16384, "path": [b"a.mkv"]},
        {"length": 16379, "attr": b"p", "path": [b".pad", b"16379"]},
        {"length": 5, "path": [b"b.srt"]},
        {"length": 16379, "path": [b".pad", b"16379"]},
        {"length": 7, "path": [b"_____padding_file_0_"]},
        {"length": 5, "path": [b"c.nfo"]},
    ]
    payload = sum(f["length"] for f in files)
    info = v1_info(length=None, name=b"top", files=files, pieces=b"p" * (-(-payload // 16384) * 20))
    meta = parse_torrent(hand(info), LIMIT)
    listed = [(f.path, f.size) for f in meta.files]
    assert listed == [("top/a.mkv", 16384), ("top/b.srt", 5), ("top/c.nfo", 5)]
    assert meta.total_size == 16394


def test_utf8_variants_and_invalid_bytes() -> None:
    """name.utf-8 wins over name; invalid UTF-8 bytes show as '_' as in qBittorrent."""
    meta = parse_torrent(hand(v1_info(**{"name": b"\xcf\xf0", "name.utf-8": "Привет".encode()})), LIMIT)
    assert meta.name == "Привет"
    assert parse_torrent(hand(v1_info(name=b"\xff\xfeab.c")), LIMIT).name == "__ab.c"


def test_trackers_from_announce_list() -> None:
    """announce and every tier of announce-list, in order, once each."""
    data = hand(v1_info(), announce=b"http://a/", **{"announce-list": [[b"http://a/", b"udp://b/"], [b"udp://c/"]]})
    assert parse_torrent(data, LIMIT).trackers == ("http://a/", "udp://b/", "udp://c/")


def test_size_limit() -> None:
    """A torrent over the configured limit is refused before it is parsed."""
    data = hand(v1_info(comment=b"x" * 2000))
    with pytest.raises(InvalidSource, match="torrent is larger than the 1 KiB limit"):
        parse_torrent(data, 1024)
    with pytest.raises(InvalidSource, match="larger than the 10 MiB limit"):
        parse_torrent(b"d" + b"0:" * (LIMIT // 2) + b"e", LIMIT)
    assert parse_torrent(data, len(data)).name == "film.mkv"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "not a torrent file: the file is empty"),
        (b"  \n", "not a torrent file: the file is empty"),
        (b"<html>not found</html>", r"not a torrent file: it is a web page \(HTML\)"),
        (b"\n<!DOCTYPE html><html><body>Login</body></html>", r"web page \(HTML\)"),
        (b"magnet:?xt=urn:btih:" + b"a" * 40, "a magnet link saved as text"),
        (b'{"error": "not found"}', "JSON or other text"),
        (hand(v1_info())[:-7], "not a torrent file: it is damaged or cut short"),
        (hand(v1_info()) + b"x", "damaged or cut short"),
        (b"li1ee", "not a bencoded dictionary"),
        (b"4:spam", "not a bencoded dictionary"),
        (bencode2.bencode({"announce": b"http://t/"}), "no 'info' dictionary"),
        (bencode2.bencode({"info": [1, 2]}), "no 'info' dictionary"),
        (b"d4:infod4:name1:xe4:infod4:name1:yee", "duplicated dictionary key"),
        (b"d4:info" + b"l" * 200 + b"e" * 200 + b"e", "nested deeper"),
        (b"d4:infoi" + b"9" * 30 + b"ee", "not a torrent file"),
        (b"d4:info99999999999:xe", "not a torrent file"),
        (hand(v1_info(pieces=None)), "'pieces'"),
        (hand(v1_info(pieces=b"p" * 19)), "'pieces' holds 19 bytes"),
        (hand(v1_info(pieces=b"p" * 40)), "expected 1 SHA-1 hashes"),
        (hand(v1_info(pieces=7)), "'pieces'"),
        (hand(v1_info(**{"piece length": 0})), "'piece length'"),
        (hand(v1_info(**{"piece length": None})), "'piece length'"),
        (hand(v1_info(length=-1)), "no valid length"),
        (hand(v1_info(length=b"5")), "no valid length"),
        (hand(v1_info(length=None)), "neither 'length' nor 'files'"),
        (hand(v1_info(length=0)), "holds no data"),
        (hand(v1_info(name=None)), "torrent name is missing"),
        (hand(v1_info(**{"meta version": 3})), "unsupported torrent version 3"),
        (hand(v1_info(**{"meta version": b"2"})), "'meta version'"),
        (hand(v1_info(**{"meta version": 2})), "needs a 'file tree'"),
        (hand(v1_info(**{"file tree": {}})), "without 'meta version' 2"),
        (hand(multi_info([[b"a"], [b"a"]])), "same file twice"),
        (hand(v1_info(length=None, files=b"a")), "'files' is not a list"),
        (hand(v1_info(length=None, files=[b"a"])), "file #0 is not a dictionary"),
        (hand(v1_info(length=None, files=[{"length": 5}])), "file #0 has no path"),
        (hand(v1_info(length=None, files=[])), "lists no files"),
    ],
)
def test_malformed_torrents(data: bytes, message: str) -> None:
    """Each malformed torrent is refused with a sentence naming the problem."""
    with pytest.raises(InvalidSource, match=message):
        parse_torrent(data, LIMIT)


@pytest.mark.parametrize("component", [b"", b".", b"..", b"a/b", b"a\\b", b"a\x00b", b"a\nb"])
def test_hostile_file_names(component: bytes) -> None:
    """Empty, dot, dot-dot, separators and control characters are refused anywhere in a path."""
    with pytest.raises(InvalidSource, match="unsafe file name"):
        parse_torrent(hand(multi_info([[b"ok.mkv"], [b"dir", component, b"x.mkv"]])), LIMIT)
    with pytest.raises(InvalidSource, match="unsafe file name"):
        parse_torrent(hand(multi_info([[b"dir", component]])), LIMIT)
    with pytest.raises(InvalidSource, match="unsafe file name"):
        parse_torrent(hand(v1_info(name=component)), LIMIT)
    if component:  # an empty key in a v2 tree is the file marker itself, not a name
        tree = {component: {b"": {b"length": 5, b"pieces root": b"r" * 32}}}
        v2 = {"name": b"top", "piece length": 16384, "meta version": 2, "file tree": {b"d": tree}}
        with pytest.raises(InvalidSource, match="unsafe file name"):
            parse_torrent(hand(v2), LIMIT)


def v2_info(tree: dict, **changes: object) -> dict:
    """A v2 info dict around a file tree."""
    info: dict = {"name": b"top", "piece length": 16384, "meta version": 2, "file tree": tree}
    info.update(changes)
    return {k: v for k, v in info.items() if v is not None}


def leaf(length: int = 5, root: bytes = b"r" * 32) -> dict:
    """One v2 file node."""
    return {b"": {b"length": length, b"pieces root": root}}


def test_v2_tree_layout() -> None:
    """Nested v2 directories become '/'-joined paths under the torrent name."""
    meta = parse_torrent(hand(v2_info({b"a.mkv": leaf(7), b"Subs": {b"ru.srt": leaf(3)}})), LIMIT)
    assert [(f.path, f.size) for f in meta.files] == [("top/Subs/ru.srt", 3), ("top/a.mkv", 7)]
    assert meta.v1 is None
    assert meta.v2 is not None


@pytest.mark.parametrize(
    ("info", "message"),
    [
        (v2_info({b"a": leaf(root=b"r" * 31)}), "'pieces root'"),
        (v2_info({b"a": leaf(root=b"\0" * 32)}), "'pieces root'"),
        (v2_info({b"a": {b"": {b"length": 5, b"attr": b"p", b"pieces root": b"r" * 32}}}), "padding"),
        (v2_info({b"a": 5}), "file tree is malformed"),
        (v2_info([]), "file tree is malformed"),
        (v2_info({b"a": {b"": 5}}), "is malformed"),
        (v2_info({b"a": leaf(-1)}), "no valid length"),
        (v2_info({b"a": leaf()}, **{"piece length": 16385}), "power of two"),
        (v2_info({b"a": leaf()}, **{"piece length": 8192}), "power of two"),
        (v2_info({}), "lists no files"),
        (v2_info({b"a": leaf()}, files=[{"length": 6, "path": [b"a"]}], pieces=b"p" * 20), "disagree"),
    ],
)
def test_malformed_v2(info: dict, message: str) -> None:
    """Broken v2 file trees and hybrids whose halves disagree are refused."""
    with pytest.raises(InvalidSource, match=message):
        parse_torrent(hand(info), LIMIT)


# ---------------------------------------------------------------- properties (bytes)

bvalues = st.recursive(
    st.integers(min_value=-(10**18), max_value=10**18) | st.binary(max_size=20),
    # min_size=1: the empty list and dict are leaves of their own, so each branch really nests.
    lambda children: st.lists(children, min_size=1, max_size=4)
    | st.dictionaries(st.binary(max_size=8), children, min_size=1, max_size=4),
    max_leaves=20,
)
info_keys = st.sampled_from(
    [b"name", b"name.utf-8", b"length", b"files", b"path", b"piece length", b"pieces", b"meta version",
     b"file tree", b"", b"pieces root", b"attr", b"info"]
)
torrentish = st.recursive(
    st.integers(min_value=-3, max_value=40000)
    | st.sampled_from([b"", b".", b"..", b"a", b"p", b"x" * 20, [], {}]),
    lambda children: st.lists(children, min_size=1, max_size=3)
    | st.dictionaries(info_keys, children, min_size=1, max_size=5),
    max_leaves=25,
)


@given(st.binary(max_size=400))
def test_any_bytes_are_a_torrent_or_invalid_source(data: bytes) -> None:
    """Arbitrary bytes never raise anything but InvalidSource."""
    try:
        parse_torrent(data, LIMIT)
    except InvalidSource:
        pass


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(torrentish)
def test_torrent_shaped_values_never_crash(info: object) -> None:
    """Dicts made of torrent keys and odd values (deep paths of the parser) never crash."""
    for data in (bencode2.bencode({b"info": info}), bencode2.bencode(info)):
        try:
            meta = parse_torrent(data, LIMIT)
        except InvalidSource:
            continue
        assert isinstance(meta, TorrentMeta)
        assert meta.files
        assert meta.total_size > 0


@given(bvalues)
def test_decoder_round_trips_canonical_bencode(value: object) -> None:
    """Our decoder reads back whatever bencode2 writes, and finds the info span exactly."""
    data = bencode2.bencode({b"info": value, b"z": 1})
    decoded = bencoding.decode(data)
    assert decoded.value == {b"info": value, b"z": 1}
    start, end = decoded.info_span
    assert data[start:end] == bencode2.bencode(value)


def _has_huge_int(value: object) -> bool:
    if isinstance(value, int):
        return abs(value) >= 10**19
    if isinstance(value, list):
        return any(_has_huge_int(v) for v in value)
    if isinstance(value, dict):
        return any(_has_huge_int(v) for v in value.values())
    return False


@given(st.binary(max_size=200) | st.text(alphabet="ilde0123456789:-", max_size=60).map(str.encode))
def test_decoder_agrees_with_bencode2(data: bytes) -> None:
    """On anything bencode2 accepts, our tolerant decoder returns the same value."""
    try:
        expected = bencode2.bdecode(data)
    except ValueError:
        return
    if _has_huge_int(expected):
        # We refuse integers beyond int64 (as libtorrent does); bencode2 takes any size.
        with pytest.raises(bencoding.BencodeError, match="oversized integer"):
            bencoding.decode(data)
    else:
        assert bencoding.decode(data).value == expected


# ---------------------------------------------------------------- against the real qBittorrent


def test_hashes_and_files_match_qbittorrent(tmp_path: Path, qbittorrent: QbittorrentInstance) -> None:
    """What qBittorrent reports for v1, v2 and hybrid torrents is exactly what we computed."""
    content = make_content(tmp_path, "Сериал S01", SERIES, seed=3)
    torrents = {
        "v1": torrent_v1(content)[0],
        "v2": torrent_v2(content, "v2")[0],
        "hybrid": torrent_v2(content, "hybrid")[0],
        "hybrid-single": torrent_v2(content / "e02.mkv", "hybrid")[0],
    }
    with qbittorrent.process.admin() as client:
        for tag, data in torrents.items():
            reply = client.post(
                "torrents/add", files={"torrents": (f"{tag}.torrent", data, "application/x-bittorrent")},
                data={"savepath": str(qbittorrent.data_dir), "paused": "true", "tags": f"id-{tag}"},
            )
            assert reply.text == "Ok.", tag
        for tag, data in torrents.items():
            meta = parse_torrent(data, LIMIT)
            [info] = wait_for(lambda tag=tag: client.get("torrents/info", params={"tag": f"id-{tag}"}).json())
            assert (info["infohash_v1"] or None, info["infohash_v2"] or None) == (meta.v1, meta.v2), tag
            files = client.get("torrents/files", params={"hash": info["hash"]}).json()
            assert [(f["name"], f["size"]) for f in files] == [(f.path, f.size) for f in meta.files], tag
