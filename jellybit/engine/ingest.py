"""Ingest: the one use-case every transport calls to accept a torrent (and the worker's adoption)."""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from jellybit.core.identity import (
    SourceKind,
    TorrentMeta,
    clean_name,
    infohash_from_hex,
    parse_source,
    parse_torrent,
)
from jellybit.core.limits import MAX_CONTEXT_CHARS
from jellybit.core.models import Download, Infohash, NewDownload
from jellybit.core.states import Actor, State
from jellybit.core.store_port import StorePort
from jellybit.engine.source_guard import SourceGuard
from jellybit.errors import InvalidArgument, InvalidSource
from jellybit.logs import for_download

log = logging.getLogger(__name__)


# Reads `.torrent` bytes (at most the limit) into its metadata; raises InvalidSource.
TorrentParser = Callable[[bytes, int], Awaitable[TorrentMeta]]


async def parse_here(data: bytes, max_bytes: int) -> TorrentMeta:
    """Parse on the calling thread (tests, small files)."""
    return parse_torrent(data, max_bytes)


@dataclass(frozen=True)
class IngestResult:
    """What happened: a new download, or the active one it joined (with the hashes it gained)."""

    download: Download
    created: bool
    added_hashes: tuple[str, ...] = ()
    settled_before: tuple[str, ...] = ()   # earlier settled downloads with one of the same hashes

    @property
    def id(self) -> str:
        """The download id (new or joined)."""
        return self.download.id


def checked_text(value: object, *, limit: int, what: str) -> str:
    """Strip control characters (keeping newlines and tabs) and surrounding space; bound the length."""
    if not isinstance(value, str):
        raise InvalidArgument(f"{what} must be text")
    text = value.replace("\r\n", "\n").replace("\r", "\n")
    text = "".join(
        c for c in text if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cs")
    ).strip()
    if len(text) > limit:
        raise InvalidArgument(f"{what} is longer than {limit} characters")
    return text


async def ingest(
    store: StorePort,
    *,
    source: str | None = None,
    torrent: bytes | None = None,
    context: str = "",
    max_torrent_bytes: int,
    tag_prefix: str = "jellybit-",
    actor: Actor = Actor.HUMAN,
    parse: TorrentParser = parse_here,
    guard: SourceGuard | None = None,
) -> IngestResult:
    """Validate a source (magnet, URL, infohash) or .torrent bytes, then create or join a download.

    With a `guard`, every host the source would make qBittorrent contact is checked first.
    """
    if (source is None) == (torrent is None):
        raise InvalidArgument("give exactly one of: a source (magnet link, http(s) URL, infohash) "
                              "or a .torrent file")
    context = checked_text(context, limit=MAX_CONTEXT_CHARS, what="the context")
    if torrent is not None:
        meta = await parse(torrent, max_torrent_bytes)
        if guard is not None:
            await guard.check_torrent(meta)
        new = NewDownload(
            source_type=SourceKind.TORRENT.value, source_ref=meta.name, display_name=meta.name,
            context=context, infohashes=meta.infohashes, torrent_bytes=bytes(torrent),
        )
    else:
        parsed = parse_source(source)
        if guard is not None:
            await guard.check_source(parsed)
        new = NewDownload(
            source_type=parsed.kind.value, source_ref=parsed.uri, display_name=parsed.display_name,
            context=context, infohashes=parsed.infohashes,
        )
    return await _create_or_join(store, new, actor=actor, tag_prefix=tag_prefix, reason="added")


async def adopt(
    store: StorePort, *, name: str, infohashes: Iterable[Infohash | str], tag_prefix: str = "jellybit-",
) -> IngestResult:
    """Make a torrent a user added straight into qBittorrent a download (empty context)."""
    hashes: list[Infohash] = []
    for value in infohashes:
        infohash = infohash_from_hex(value.value if isinstance(value, Infohash) else value)
        if infohash not in hashes:
            hashes.append(infohash)
    if not hashes:
        raise InvalidSource("an adopted torrent needs at least one infohash")
    # The name comes from qBittorrent, not from a user: clean and cut it, never refuse it.
    display = clean_name(name if isinstance(name, str) else "")
    new = NewDownload(
        source_type=SourceKind.ADOPTED.value, source_ref=display or hashes[0].value,
        display_name=display, context="", infohashes=tuple(hashes),
    )
    return await _create_or_join(
        store, new, actor=Actor.WORKER, tag_prefix=tag_prefix, reason="adopted from qBittorrent"
    )


async def _create_or_join(
    store: StorePort, new: NewDownload, *, actor: Actor, tag_prefix: str, reason: str
) -> IngestResult:
    result = await store.create_download_if_no_active(
        new, state=State.QUEUED, reason=reason, actor=actor, qbt_tag_prefix=tag_prefix
    )
    download = result.download
    # All hashes of the (possibly joined) download: a v2 magnet joining a hybrid still finds
    # the earlier download that only knew its v1 hash.
    settled = await store.settled_with_hashes(download.hashes(), exclude=download.id)
    if result.created:
        log.info("download created", **for_download(
            download.id, source_type=new.source_type, infohashes=[h.value for h in new.infohashes],
            settled_before=settled,
        ))
    else:
        log.info("source joined the active download", **for_download(
            download.id, source_type=new.source_type, added_hashes=list(result.added_hashes),
        ))
    return IngestResult(download, result.created, result.added_hashes, tuple(settled))
