"""The layout journal: `apply_batch` and `file_link` rows, supersede, and computed title groups."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath
from typing import Any

import aiosqlite

from jellybit import clock, ident
from jellybit.adapters.store.base import StoreBase
from jellybit.core.links import (
    LIVE_STATUSES,
    ApplyBatch,
    BatchStatus,
    FileLink,
    LinkStatus,
    LinkUpdate,
    NewLink,
    TitleGroup,
    TitleMember,
    episode_numbers,
    title_folder_of,
)
from jellybit.core.records import Role
from jellybit.errors import NotFound

_LIVE = tuple(sorted(s.value for s in LIVE_STATUSES))
_LIVE_SQL = "(" + ",".join("?" for _ in _LIVE) + ")"
# A stored row stores its batch's number and its folders' numbers (migration 0004): read back,
# it is joined to its batch (download, batch id) and its folders (full paths), in FileLink's field
# order, positionally (a batch has thousands of rows).
_COLUMNS = ("fl.id", "b.download_id", "b.id", "sf.path || '/' || fl.src_name",
            "df.path || '/' || fl.dst_name", "fl.kind", "fl.status", "fl.size", "fl.src_dev", "fl.src_ino",
            "fl.src_mtime_ns", "fl.dst_ino", "fl.message")
_FROM = (" FROM file_link fl JOIN apply_batch b ON b.seq = fl.batch"
         " JOIN link_folder sf ON sf.id = fl.src_folder JOIN link_folder df ON df.id = fl.dst_folder")
_SELECT = "SELECT " + ", ".join(_COLUMNS) + _FROM
_INSERT = ("INSERT INTO file_link (id, batch, src_folder, src_name, dst_folder, dst_name, kind, status, size,"
           " src_dev, src_ino, src_mtime_ns, dst_ino, message) VALUES ")
_VALUES_PER_ROW = 14
_ROW_MARKS = "(" + ", ".join("?" * _VALUES_PER_ROW) + ")"
_STATUS_AT = _COLUMNS.index("fl.status")
_BY_VALUE = {s.value: s for s in LinkStatus}
_VALUE: dict[str, str] = {s: s.value for s in LinkStatus}     # a LinkStatus or its text -> the stored text
_IDS_PER_STATEMENT = 900        # below SQLite's oldest limit of 999 bound variables
# 64 rows per INSERT (multi-row VALUES): a 5,000-row batch inserts in 19 ms instead of executemany's 25.
_ROWS_PER_INSERT = _IDS_PER_STATEMENT // _VALUES_PER_ROW


def _status_value(status: LinkStatus | str) -> str:
    return _VALUE.get(status) or LinkStatus(status).value


def _link(row: Sequence[Any] | aiosqlite.Row) -> FileLink:
    values = list(row)
    text = values[_STATUS_AT]
    values[_STATUS_AT] = _BY_VALUE.get(text) or LinkStatus(text)
    return _make_link(values)


_make_link = FileLink._make


def _batch(row: aiosqlite.Row) -> ApplyBatch:
    return ApplyBatch(row["id"], row["download_id"], BatchStatus(row["status"]), row["created_at"],
                      row["finished_at"])


_BATCH_SELECT = "SELECT id, download_id, status, created_at, finished_at FROM apply_batch"


def _statuses(statuses: Iterable[LinkStatus] | None) -> tuple[str, ...] | None:
    return None if statuses is None else tuple(LinkStatus(s).value for s in statuses)


def _marks(values: Sequence[object]) -> str:
    return "(" + ",".join("?" for _ in values) + ")"


async def _insert_rows(conn: aiosqlite.Connection, rows: Sequence[tuple[object, ...]]) -> None:
    """Insert journal rows a few dozen per statement (multi-row VALUES)."""
    full = len(rows) - len(rows) % _ROWS_PER_INSERT
    if full:
        statement = _INSERT + ", ".join([_ROW_MARKS] * _ROWS_PER_INSERT)
        values = [value for row in rows[:full] for value in row]
        step = _ROWS_PER_INSERT * _VALUES_PER_ROW
        await conn.executemany(statement, [values[at:at + step] for at in range(0, len(values), step)])
    if full < len(rows):
        rest = rows[full:]
        await conn.execute(_INSERT + ", ".join([_ROW_MARKS] * len(rest)), [v for row in rest for v in row])


def split_path(path: str) -> tuple[str, str]:
    """A journaled path as (folder, name); `folder + '/' + name` is the path again (it is absolute)."""
    folder, _, name = path.rpartition("/")
    return folder, name


async def folder_ids(conn: aiosqlite.Connection, folders: Iterable[str]) -> dict[str, int]:
    """The `link_folder` number of each folder, adding the new ones (inside the caller's transaction)."""
    wanted = sorted(set(folders))
    await conn.executemany("INSERT OR IGNORE INTO link_folder (path) VALUES (?)", [(f,) for f in wanted])
    found: dict[str, int] = {}
    for start in range(0, len(wanted), _IDS_PER_STATEMENT):
        part = wanted[start:start + _IDS_PER_STATEMENT]
        sql = f"SELECT path, id FROM link_folder WHERE path IN {_marks(part)}"
        async with conn.execute(sql, part) as cur:
            found.update({row[0]: row[1] async for row in cur})
    return found


class LinksMixin(StoreBase):
    """Store methods for `apply_batch` and `file_link`."""

    conn: aiosqlite.Connection

    async def open_batch(
        self, download_id: str, links: Sequence[NewLink]
    ) -> tuple[ApplyBatch, list[FileLink]]:
        """Write a batch (`open`) and its journal rows in one transaction, before any file is touched."""
        batch_id = ident.new_id()
        now = clock.now()
        split = [(*split_path(new.src_path), *split_path(new.dst_path)) for new in links]
        async with self.write() as conn:
            cursor = await conn.execute(
                "INSERT INTO apply_batch (id, download_id, status, created_at) VALUES (?, ?, ?, ?)",
                (batch_id, download_id, BatchStatus.OPEN.value, now),
            )
            seq = cursor.lastrowid
            folders = await folder_ids(conn, (parts[at] for parts in split for at in (0, 2)))
            async with conn.execute("SELECT COALESCE(MAX(id), 0) FROM file_link") as cur:
                top = await cur.fetchone()
            first = (top[0] if top else 0) + 1      # under the write lock: ours to number
            # NewLink's fields: src, dst, kind, size, src_dev, src_ino, src_mtime_ns, status, dst_ino,
            # message (read positionally: a pack journals thousands).
            rows = [
                (first + n, seq, folders[src_folder], src_name, folders[dst_folder], dst_name, new[2],
                 _VALUE[new[7]], new[3], new[4], new[5], new[6], new[8], new[9])
                for n, (new, (src_folder, src_name, dst_folder, dst_name))
                in enumerate(zip(links, split, strict=True))
            ]
            await _insert_rows(conn, rows)
            replacing = [(first + n, new.replaces) for n, new in enumerate(links) if new.replaces is not None]
            if replacing:
                await conn.executemany("INSERT INTO link_replace (link_id, replaced_id) VALUES (?, ?)",
                                       replacing)
        stored = [_make_link((first + n, download_id, batch_id, new[0], new[1], new[2], _BY_VALUE[new[7]],
                              *new[3:7], new[8], new[9]))
                  for n, new in enumerate(links)]
        return ApplyBatch(batch_id, download_id, BatchStatus.OPEN, now, None), stored

    async def note_copy_inode(self, link_id: int, dst_ino: int) -> None:
        """Record a pending copy's inode before it is published (so recovery can recognise it)."""
        async with self.write() as conn:
            await conn.execute(
                "UPDATE file_link SET dst_ino = ? WHERE id = ? AND status = ?",
                (dst_ino, link_id, LinkStatus.PENDING.value),
            )

    async def finish_links(self, updates: Sequence[LinkUpdate], linked: Sequence[int] = ()) -> None:
        """Record the outcome of journal rows in one transaction.

        `updates` carry each row's status, target inode and message; `linked` are ids of rows
        that became plain hardlinks of their source (linked, target inode = source inode, no
        message), written a few hundred per statement.
        """
        if not updates and not linked:
            return
        async with self.write() as conn:
            if updates:
                await conn.executemany(
                    "UPDATE file_link SET status = ?, dst_ino = COALESCE(?, dst_ino), message = ?"
                    " WHERE id = ?",
                    [(_status_value(u.status), u.dst_ino, u.message, u.link_id) for u in updates],
                )
            for start in range(0, len(linked), _IDS_PER_STATEMENT):
                part = linked[start:start + _IDS_PER_STATEMENT]
                await conn.execute(
                    "UPDATE file_link SET status = ?, dst_ino = src_ino, message = NULL"
                    f" WHERE id IN {_marks(part)}",
                    (LinkStatus.LINKED.value, *part),
                )

    async def commit_batch(self, batch_id: str, *, pending_laid: bool = False) -> int:
        """Mark a batch committed and supersede other batches' live rows on its paths (same inode).

        With `pending_laid`, the rows still `pending` are the ones laid as plain hardlinks of their
        journaled source: they become `linked` (target inode = source inode) in the same transaction.
        """
        now = clock.now()
        async with self.write() as conn:
            sql = "SELECT seq, download_id FROM apply_batch WHERE id = ?"
            async with conn.execute(sql, (batch_id,)) as cur:
                row = await cur.fetchone()
            if row is None:
                raise NotFound(f"unknown apply batch {batch_id!r}")
            seq = row["seq"]
            if pending_laid:
                await conn.execute(
                    "UPDATE file_link SET status = ?, dst_ino = src_ino, message = NULL"
                    " WHERE batch = ? AND status = ?",
                    (LinkStatus.LINKED.value, seq, LinkStatus.PENDING.value),
                )
            # Driven by this batch's rows: each probes the target index for other batches' live rows.
            cursor = await conn.execute(
                "UPDATE file_link SET status = ?, message = ? WHERE id IN ("
                "  SELECT o.id FROM file_link n JOIN file_link o"
                "  ON o.dst_folder = n.dst_folder AND o.dst_name = n.dst_name AND o.dst_ino = n.dst_ino"
                f"  WHERE n.batch = ? AND n.status IN {_LIVE_SQL}"
                f"  AND o.batch != ? AND o.status IN {_LIVE_SQL})",
                (LinkStatus.SUPERSEDED.value,
                 f"superseded by batch {batch_id} of download {row['download_id']}",
                 seq, *_LIVE, seq, *_LIVE),
            )
            superseded = cursor.rowcount
            # Better copies: the rows this batch's live links replaced stop owning their files.
            await conn.execute(
                "UPDATE file_link SET status = ?, message = ? WHERE id IN ("
                "  SELECT r.replaced_id FROM link_replace r JOIN file_link n ON n.id = r.link_id"
                f"  WHERE n.batch = ? AND n.status IN {_LIVE_SQL}) AND status IN {_LIVE_SQL}",
                (LinkStatus.REPLACED.value, f"replaced by batch {batch_id} of download {row['download_id']}",
                 seq, *_LIVE, *_LIVE),
            )
            await conn.execute(
                "UPDATE apply_batch SET status = ?, finished_at = ? WHERE seq = ?",
                (BatchStatus.COMMITTED.value, now, seq),
            )
        return superseded

    async def close_batch(self, batch_id: str, status: BatchStatus) -> None:
        """Set a batch's final status (`rolled_back` or `undone`)."""
        async with self.write() as conn:
            await conn.execute(
                "UPDATE apply_batch SET status = ?, finished_at = ? WHERE id = ?",
                (BatchStatus(status).value, clock.now(), batch_id),
            )

    async def get_batch(self, batch_id: str) -> ApplyBatch:
        """Return one batch or raise NotFound."""
        row = await self.fetchone(f"{_BATCH_SELECT} WHERE id = ?", (batch_id,))
        if row is None:
            raise NotFound(f"unknown apply batch {batch_id!r}")
        return _batch(row)

    async def open_batches(self) -> list[ApplyBatch]:
        """Return the batches a crash left `open`, oldest first."""
        rows = await self.fetchall(
            f"{_BATCH_SELECT} WHERE status = ? ORDER BY seq", (BatchStatus.OPEN.value,)
        )
        return [_batch(r) for r in rows]

    async def batches_for_download(
        self, download_id: str, statuses: Iterable[BatchStatus] | None = None
    ) -> list[ApplyBatch]:
        """Return a download's batches, newest first."""
        sql = f"{_BATCH_SELECT} WHERE download_id = ?"
        params: list[object] = [download_id]
        if statuses is not None:
            values = [BatchStatus(s).value for s in statuses]
            sql += " AND status IN " + _marks(values)
            params.extend(values)
        rows = await self.fetchall(sql + " ORDER BY seq DESC", tuple(params))
        return [_batch(r) for r in rows]

    async def _links_where(self, where: str, params: Sequence[object], statuses: Iterable[LinkStatus] | None):
        values = _statuses(statuses)
        sql = f"{_SELECT} WHERE {where}"
        args = list(params)
        if values is not None:
            if not values:
                return []
            sql += " AND fl.status IN " + _marks(values)
            args.extend(values)
        rows = await self.fetchall(sql + " ORDER BY fl.id", tuple(args))
        return [_link(r) for r in rows]

    async def links_for_download(
        self, download_id: str, statuses: Iterable[LinkStatus] | None = None
    ) -> list[FileLink]:
        """Return a download's journal rows, oldest first."""
        return await self._links_where("b.download_id = ?", (download_id,), statuses)

    async def links_for_batch(
        self, batch_id: str, statuses: Iterable[LinkStatus] | None = None
    ) -> list[FileLink]:
        """Return one batch's journal rows in the order they were planned."""
        return await self._links_where("b.id = ?", (batch_id,), statuses)

    async def links_at(self, dst_path: str, statuses: Iterable[LinkStatus] | None = None) -> list[FileLink]:
        """Return every row that laid (or tried to lay) this target path."""
        return await self._links_where("df.path = ? AND fl.dst_name = ?", split_path(dst_path), statuses)

    async def replaced_in_batch(self, batch_id: str) -> dict[int, FileLink]:
        """For each row of the batch that replaces another download's row: that row (new id -> old row)."""
        rows = await self.fetchall(
            f"SELECT r.link_id, {', '.join(_COLUMNS)}{_FROM} JOIN link_replace r ON r.replaced_id = fl.id"
            " WHERE r.link_id IN (SELECT n.id FROM file_link n JOIN apply_batch nb ON nb.seq = n.batch"
            "  WHERE nb.id = ?)", (batch_id,))
        found: dict[int, FileLink] = {}
        for row in rows:
            values = list(row)
            found[values[0]] = _link(values[1:])
        return found

    async def replacing_rows(self, link_ids: Sequence[int]) -> dict[int, FileLink]:
        """For each of these rows another row replaced: the newest row that replaced it."""
        found: dict[int, FileLink] = {}
        for start in range(0, len(link_ids), _IDS_PER_STATEMENT):
            part = list(link_ids[start:start + _IDS_PER_STATEMENT])
            rows = await self.fetchall(
                f"SELECT r.replaced_id, {', '.join(_COLUMNS)}{_FROM} JOIN link_replace r ON r.link_id = fl.id"
                f" WHERE r.replaced_id IN {_marks(part)} ORDER BY fl.id", tuple(part))
            for row in rows:
                values = list(row)
                found[values[0]] = _link(values[1:])
        return found

    async def live_links_for_title(self, provider: str, provider_id: str) -> list[FileLink]:
        """Return live rows of every download whose current recognition is `(provider, provider_id)`."""
        rows = await self.fetchall(
            f"{_SELECT} JOIN recognition r ON r.download_id = b.download_id AND r.is_current = 1"
            f" WHERE r.provider = ? AND r.provider_id = ? AND fl.status IN {_LIVE_SQL} ORDER BY fl.id",
            (provider, provider_id, *_LIVE),
        )
        return [_link(r) for r in rows]

    async def title_download_ids(self, provider: str, provider_id: str) -> list[str]:
        """Return downloads of a title group: current recognition on the id, with live (or replaced) links."""
        # A download whose files a better copy replaced belongs to the title too: undoing the
        # better copy would bring its file back into a title being deleted.
        rows = await self.fetchall(
            "SELECT DISTINCT r.download_id FROM recognition r"
            " WHERE r.is_current = 1 AND r.provider = ? AND r.provider_id = ? AND EXISTS ("
            "  SELECT 1 FROM apply_batch b JOIN file_link fl ON fl.batch = b.seq"
            f"  WHERE b.download_id = r.download_id AND fl.status IN ({_LIVE_SQL[1:-1]}, ?))"
            " ORDER BY r.download_id",
            (provider, provider_id, *_LIVE, LinkStatus.REPLACED.value),
        )
        return [r["download_id"] for r in rows]

    async def title_groups(self, roots: Sequence[str]) -> list[TitleGroup]:
        """Compute every title group with live links: members, title folders, episode coverage."""
        rows = await self.fetchall(
            "SELECT r.provider, r.provider_id, r.media_type, r.title, r.year,"
            " d.id AS download_id, d.display_name, d.state FROM recognition r"
            " JOIN download d ON d.id = r.download_id"
            " WHERE r.is_current = 1 AND r.provider IS NOT NULL AND r.provider_id IS NOT NULL"
            " ORDER BY r.provider, r.provider_id, d.id"
        )
        live_rows = await self.fetchall(
            "SELECT b.download_id, df.path || '/' || fl.dst_name AS dst_path, fl.kind FROM file_link fl"
            " JOIN apply_batch b ON b.seq = fl.batch JOIN link_folder df ON df.id = fl.dst_folder"
            f" WHERE fl.status IN {_LIVE_SQL}", _LIVE
        )
        live: dict[str, list[str]] = defaultdict(list)
        videos: dict[str, list[str]] = defaultdict(list)
        for row in live_rows:
            live[row["download_id"]].append(row["dst_path"])
            if row["kind"] == Role.VIDEO.value:
                videos[row["download_id"]].append(row["dst_path"])
        grouped: dict[tuple[str, str], list[aiosqlite.Row]] = defaultdict(list)
        for row in rows:
            if live.get(row["download_id"]):
                grouped[(row["provider"], row["provider_id"])].append(row)
        groups = []
        for (provider, provider_id), members in grouped.items():
            folders: set[str] = set()
            seasons: dict[int, set[int]] = defaultdict(set)
            for member in members:
                paths = live[member["download_id"]]
                folders.update(f for p in paths if (f := title_folder_of(p, roots)) is not None)
                for path in videos[member["download_id"]]:
                    for season, episode in episode_numbers(PurePosixPath(path).name):
                        seasons[season].add(episode)
            first = members[0]
            groups.append(
                TitleGroup(
                    provider=provider, provider_id=provider_id, media_type=first["media_type"],
                    title=first["title"], year=first["year"],
                    members=tuple(
                        TitleMember(
                            m["download_id"], m["display_name"], m["state"], len(live[m["download_id"]])
                        )
                        for m in members
                    ),
                    folders=tuple(sorted(folders)),
                    seasons={s: tuple(sorted(e)) for s, e in sorted(seasons.items())},
                )
            )
        return groups
