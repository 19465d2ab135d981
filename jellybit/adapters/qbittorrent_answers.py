"""qBittorrent WebUI API answers as pydantic models, and their conversion to the port's dataclasses."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

from jellybit.core.ports import TorrentInfo

ETA_INFINITY = 8_640_000              # qBittorrent's "no estimate" (100 days)


class Answer(BaseModel):
    """Every answer: fields qBittorrent adds in later versions are ignored."""

    model_config = ConfigDict(extra="ignore")


class TorrentAnswer(Answer):
    """One torrent of `torrents/info` or (merged) `sync/maindata`."""

    hash: str
    infohash_v1: str | None = ""
    infohash_v2: str | None = ""
    name: str | None = ""
    state: str | None = "unknown"
    progress: float | None = 0.0
    dlspeed: int | None = 0
    eta: int | None = None
    size: int | None = 0
    total_size: int | None = 0
    amount_left: int | None = 0
    content_path: str | None = ""
    save_path: str | None = ""
    category: str | None = ""
    tags: str | None = ""
    added_on: int | None = None
    completion_on: int | None = None
    magnet_uri: str | None = ""
    num_seeds: int | None = 0
    num_leechs: int | None = 0

    def to_info(self) -> TorrentInfo:
        """Convert to the port's dataclass (tags split, eta/timestamps normalized)."""
        eta = self.eta if self.eta is not None and 0 <= self.eta < ETA_INFINITY else None
        return TorrentInfo(
            hash=self.hash.lower(),
            infohash_v1=(self.infohash_v1 or "").lower(),
            infohash_v2=(self.infohash_v2 or "").lower(),
            name=self.name or "",
            state=self.state or "unknown",
            progress=min(max(float(self.progress or 0.0), 0.0), 1.0),
            dlspeed=self.dlspeed or 0,
            eta=eta,
            size=self.size or 0,
            total_size=self.total_size or 0,
            amount_left=self.amount_left or 0,
            content_path=self.content_path or "",
            save_path=self.save_path or "",
            category=self.category or "",
            tags=tuple(t.strip() for t in (self.tags or "").split(",") if t.strip()),
            added_on=_timestamp(self.added_on),
            completion_on=_timestamp(self.completion_on),
            magnet_uri=self.magnet_uri or "",
            num_seeds=max(self.num_seeds or 0, 0),
            num_leechs=max(self.num_leechs or 0, 0),
        )


class FileAnswer(Answer):
    """One file of `torrents/files`."""

    index: int | None = None
    name: str
    size: int = 0
    progress: float = 0.0


class MainData(Answer):
    """A `sync/maindata` answer: the torrents it changed (partial) and removed."""

    rid: int
    full_update: bool = False
    torrents: dict[str, dict[str, Any]] = {}
    torrents_removed: list[str] = []


class CategoryAnswer(Answer):
    """One category of `torrents/categories`."""

    name: str = ""
    savePath: str = ""


class AddAnswer(Answer):
    """`torrents/add`'s JSON answer (WebAPI 2.14+)."""

    success_count: int = 0
    pending_count: int = 0
    failure_count: int = 0


TORRENTS = TypeAdapter(list[TorrentAnswer])
FILES = TypeAdapter(list[FileAnswer])
CATEGORIES = TypeAdapter(dict[str, CategoryAnswer])
PREFERENCES = TypeAdapter(dict[str, Any])


def _timestamp(value: int | None) -> int | None:
    return value if value is not None and 0 < value < 4_294_967_295 else None
