"""Download rows, their infohashes and state transitions; the guarded methods of invariant 4."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import aiosqlite

from jellybit import clock, ident
from jellybit.adapters.store.base import StoreBase
from jellybit.core.models import Download, Infohash, NewDownload, Transition
from jellybit.core.states import ACTIVE_STATES, Actor, State, can_transition, is_reactivation
from jellybit.core.store_records import CreateResult
from jellybit.errors import Conflict, InvalidState, NotFound

_ACTIVE = tuple(s.value for s in ACTIVE_STATES)
_ACTIVE_SQL = "(" + ",".join("?" for _ in _ACTIVE) + ")"

# Columns a caller may update through `update_download` (never `state`: that has its own path).
UPDATABLE = frozenset(
    {
        "display_name", "context", "error_code", "error_msg", "source_miss_count",
        "content_path", "save_path", "total_size", "progress", "dl_speed", "eta",
        "torrent_state", "source_added_at", "completed_at", "retried_at", "defer_until",
        "source_ref", "num_seeds", "num_peers", "awaiting_files",
        "files_in_library",
    }
)


def _row_to_download(row: Mapping[str, Any] | aiosqlite.Row, hashes: Iterable[Infohash]) -> Download:
    data = dict(row)
    data["state"] = State(data["state"])
    data["awaiting_files"] = bool(data.get("awaiting_files"))
    return Download(infohashes=tuple(sorted(hashes, key=lambda h: (h.kind, h.value))), **data)


def _transition(row: aiosqlite.Row) -> Transition:
    return Transition(
        row["id"], row["download_id"], State(row["from_state"]) if row["from_state"] else None,
        State(row["to_state"]), row["reason"], Actor(row["actor"]), row["created_at"],
    )


def _download_filter(
    states: Iterable[State] | None, text: str | None
) -> tuple[str | None, list[Any]]:
    """Build the WHERE clause of a download query; None when the filter matches nothing."""
    where: list[str] = []
    params: list[Any] = []
    if states is not None:
        values = [State(s).value for s in states]
        if not values:
            return None, []
        where.append("state IN (" + ",".join("?" for _ in values) + ")")
        params.extend(values)
    if text:
        where.append("(display_name LIKE ? ESCAPE '\\' OR source_ref LIKE ? ESCAPE '\\'"
                     " OR context LIKE ? ESCAPE '\\' OR id = ?)")
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        params.extend([pattern, pattern, pattern, text.lower()])
    return (" WHERE " + " AND ".join(where)) if where else "", params


class DownloadsMixin(StoreBase):
    """Store methods for `download`, `download_infohash`, `download_torrent`, `state_transition`."""

    conn: aiosqlite.Connection

    async def _active_owners(
        self, conn: aiosqlite.Connection, hashes: Iterable[str], exclude: str | None = None
    ) -> dict[str, str]:
        """Map each of these hashes that an active download (other than `exclude`) owns to it."""
        values = sorted(set(hashes))
        if not values:
            return {}
        marks = ",".join("?" for _ in values)
        sql = (
            "SELECT h.infohash, d.id FROM download d JOIN download_infohash h ON h.download_id = d.id "
            f"WHERE h.infohash IN ({marks}) AND d.state IN {_ACTIVE_SQL} AND d.id != ? "
            "ORDER BY d.id"
        )
        async with conn.execute(sql, (*values, *_ACTIVE, exclude or "")) as cur:
            rows = await cur.fetchall()
        owners: dict[str, str] = {}
        for row in rows:
            owners.setdefault(row["infohash"], row["id"])
        return owners

    async def _active_owner(
        self, conn: aiosqlite.Connection, hashes: Iterable[str], exclude: str | None = None
    ) -> str | None:
        owners = await self._active_owners(conn, hashes, exclude)
        return min(owners.values()) if owners else None

    async def _insert_hashes(
        self, conn: aiosqlite.Connection, download_id: str, hashes: Iterable[Infohash]
    ) -> tuple[str, ...]:
        added: list[str] = []
        now = clock.now()
        for h in hashes:
            cur = await conn.execute(
                "INSERT OR IGNORE INTO download_infohash (infohash, download_id, kind, created_at)"
                " VALUES (?, ?, ?, ?)",
                (h.value, download_id, h.kind, now),
            )
            if cur.rowcount:
                added.append(h.value)
        return tuple(added)

    async def _existing(self, conn: aiosqlite.Connection, download_id: str) -> Download:
        download = await self._load(conn, download_id)
        if download is None:
            raise NotFound(f"unknown download id {download_id!r}")
        return download

    async def _load(self, conn: aiosqlite.Connection, download_id: str) -> Download | None:
        async with conn.execute("SELECT * FROM download WHERE id = ?", (download_id,)) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        async with conn.execute(
            "SELECT infohash, kind FROM download_infohash WHERE download_id = ?", (download_id,)
        ) as cur:
            hashes = [Infohash(r["infohash"], r["kind"]) for r in await cur.fetchall()]
        return _row_to_download(row, hashes)

    async def _insert_transition(
        self,
        conn: aiosqlite.Connection,
        download_id: str,
        source: State | None,
        target: State,
        reason: str,
        actor: Actor,
        at: str,
    ) -> Transition:
        row_id = ident.new_id()
        await conn.execute(
            "INSERT INTO state_transition (id, download_id, from_state, to_state, reason, actor,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (row_id, download_id, source.value if source else None, target.value, reason,
             actor.value, at),
        )
        return Transition(row_id, download_id, source, target, reason, actor, at)

    async def create_download_if_no_active(
        self, new: NewDownload, *, state: State = State.QUEUED, reason: str = "added",
        actor: Actor = Actor.HUMAN, qbt_tag_prefix: str = "jellybit-",
    ) -> CreateResult:
        """Create a download unless an active one owns a hash (or, for a URL, the same URL): join it.

        Joining adds the hashes the active download is missing.
        """
        async with self.write() as conn:
            owners = await self._active_owners(conn, (h.value for h in new.infohashes))
            if not owners and new.source_type == "url":
                # An http(s) source has no hash until qBittorrent fetched it; the same URL
                # added again while its download is active is the same download.
                async with conn.execute(
                    f"SELECT id FROM download WHERE source_type = 'url' AND source_ref = ?"
                    f" AND state IN {_ACTIVE_SQL} ORDER BY id LIMIT 1", (new.source_ref, *_ACTIVE),
                ) as cur:
                    row = await cur.fetchone()
                if row is not None:
                    owners = {"": row["id"]}
            if owners:
                owner = min(owners.values())
                # A hash another active download already owns stays with it: adding it here
                # would give one infohash two active downloads (invariant 4).
                missing = [h for h in new.infohashes if owners.get(h.value, owner) == owner]
                added = await self._insert_hashes(conn, owner, missing)
                if added:
                    await conn.execute(
                        "UPDATE download SET updated_at = ? WHERE id = ?", (clock.now(), owner)
                    )
                download = await self._load(conn, owner)
                assert download is not None
                return CreateResult(download, created=False, added_hashes=added)
            download_id = ident.new_id()
            now = clock.now()
            await conn.execute(
                "INSERT INTO download (id, source_type, source_ref, display_name, context, state,"
                " qbt_tag, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (download_id, new.source_type, new.source_ref, new.display_name, new.context,
                 state.value, f"{qbt_tag_prefix}{download_id}", now, now),
            )
            await self._insert_hashes(conn, download_id, new.infohashes)
            if new.torrent_bytes is not None:
                await conn.execute(
                    "INSERT INTO download_torrent (download_id, data) VALUES (?, ?)",
                    (download_id, new.torrent_bytes),
                )
            await self._insert_transition(conn, download_id, None, state, reason, actor, now)
            download = await self._load(conn, download_id)
            assert download is not None
            return CreateResult(download, created=True)

    async def add_infohashes(self, download_id: str, hashes: Iterable[Infohash]) -> tuple[str, ...]:
        """Add hashes to a download unless another active download owns one (guarded)."""
        hashes = tuple(hashes)
        async with self.write() as conn:
            await self._existing(conn, download_id)
            owner = await self._active_owner(conn, (h.value for h in hashes), exclude=download_id)
            if owner is not None:
                raise Conflict(f"infohash already belongs to active download {owner}")
            added = await self._insert_hashes(conn, download_id, hashes)
            if added:
                await conn.execute(
                    "UPDATE download SET updated_at = ? WHERE id = ?", (clock.now(), download_id)
                )
            return added

    async def transition(
        self, download_id: str, target: State, *, reason: str, actor: Actor,
        expected: State | Iterable[State] | None = None, fields: dict[str, Any] | None = None,
    ) -> tuple[Download, Transition]:
        """Move a download to `target` with its history row; refuses settled -> active."""
        async with self.write() as conn:
            current = await self._existing(conn, download_id)
            if is_reactivation(current.state, target):
                raise InvalidState(
                    f"{current.state} -> {target} must go through activate_if_no_other_active"
                )
            return await self._apply_transition(
                conn, current, target, reason, actor, expected, fields
            )

    async def activate_if_no_other_active(
        self, download_id: str, target: State, *, reason: str, actor: Actor,
        expected: State | Iterable[State] | None = None, fields: dict[str, Any] | None = None,
    ) -> tuple[Download, Transition]:
        """Settled -> active (retry, relink), refused if another active download owns a hash."""
        async with self.write() as conn:
            current = await self._existing(conn, download_id)
            owner = await self._active_owner(conn, current.hashes(), exclude=download_id)
            if owner is not None:
                raise Conflict(
                    f"another active download ({owner}) owns an infohash of {download_id}"
                )
            return await self._apply_transition(
                conn, current, target, reason, actor, expected, fields
            )

    async def _apply_transition(
        self, conn: aiosqlite.Connection, current: Download, target: State, reason: str,
        actor: Actor, expected: State | Iterable[State] | None, fields: dict[str, Any] | None,
    ) -> tuple[Download, Transition]:
        if expected is not None:
            allowed = {expected} if isinstance(expected, State) else set(expected)
            if current.state not in allowed:
                raise InvalidState(
                    f"download {current.id} is {current.state}, expected "
                    + " or ".join(sorted(allowed))
                )
        if not can_transition(current.state, target):
            raise InvalidState(f"not possible in state {current.state}: {current.state} -> {target}")
        now = clock.now()
        updates = dict(fields or {})
        bad = set(updates) - UPDATABLE
        if bad:
            raise ValueError(f"not updatable: {sorted(bad)}")
        updates["state"] = target.value
        updates["updated_at"] = now
        updates["settled_at"] = None if target in ACTIVE_STATES else now
        sets = ", ".join(f"{k} = ?" for k in updates)
        await conn.execute(
            f"UPDATE download SET {sets} WHERE id = ?", (*updates.values(), current.id)
        )
        transition = await self._insert_transition(
            conn, current.id, current.state, target, reason, actor, now
        )
        download = await self._load(conn, current.id)
        assert download is not None
        return download, transition

    async def update_download(self, download_id: str, **fields: Any) -> Download:
        """Update non-state columns; `updated_at` moves only when a value really changes."""
        bad = set(fields) - UPDATABLE
        if bad:
            raise ValueError(f"not updatable: {sorted(bad)}")
        async with self.write() as conn:
            current = await self._existing(conn, download_id)
            changed = {k: v for k, v in fields.items() if getattr(current, k) != v}
            if not changed:
                return current
            changed["updated_at"] = clock.now()
            sets = ", ".join(f"{k} = ?" for k in changed)
            await conn.execute(
                f"UPDATE download SET {sets} WHERE id = ?", (*changed.values(), download_id)
            )
            download = await self._load(conn, download_id)
            assert download is not None
            return download

    async def get_download(self, download_id: str) -> Download:
        """Return one download or raise NotFound."""
        return await self._existing(self.conn, download_id)

    async def find_download(self, download_id: str) -> Download | None:
        """Return one download or None."""
        return await self._load(self.conn, download_id)

    async def list_downloads(
        self, *, states: Iterable[State] | None = None, text: str | None = None,
        limit: int = 50, offset: int = 0,
    ) -> list[Download]:
        """Return downloads newest first, filtered by state and a case-insensitive text search."""
        where, params = _download_filter(states, text)
        if where is None:
            return []
        sql = "SELECT id FROM download" + where + " ORDER BY id DESC LIMIT ? OFFSET ?"
        params.extend([limit, offset])
        rows = await self.fetchall(sql, tuple(params))
        result = []
        for row in rows:
            download = await self._load(self.conn, row["id"])
            if download is not None:
                result.append(download)
        return result

    async def last_settled(self, state: State) -> Download | None:
        """The download that reached `state` most recently (by `settled_at`, not by when it was added)."""
        row = await self.fetchone(
            "SELECT id FROM download WHERE state = ? AND settled_at IS NOT NULL"
            " ORDER BY settled_at DESC, id DESC LIMIT 1", (state.value,))
        return await self._load(self.conn, row["id"]) if row else None

    async def count_downloads(
        self, *, states: Iterable[State] | None = None, text: str | None = None
    ) -> int:
        """Count the downloads `list_downloads` would page through with the same filters."""
        where, params = _download_filter(states, text)
        if where is None:
            return 0
        row = await self.fetchone("SELECT COUNT(*) AS n FROM download" + where, tuple(params))
        return int(row["n"]) if row else 0

    async def count_by_state(self) -> dict[State, int]:
        """Return how many downloads are in each state."""
        rows = await self.fetchall("SELECT state, COUNT(*) AS n FROM download GROUP BY state")
        return {State(r["state"]): r["n"] for r in rows}

    async def active_downloads(self) -> list[Download]:
        """Return every download in an active state, oldest first."""
        # A few queries for all of them (not two per download): the worker reads this every cycle.
        rows = await self.fetchall(
            f"SELECT * FROM download WHERE state IN {_ACTIVE_SQL} ORDER BY id", _ACTIVE
        )
        ids = [r["id"] for r in rows]
        hashes: dict[str, list[Infohash]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            hash_rows = await self.fetchall(
                "SELECT download_id, infohash, kind FROM download_infohash WHERE download_id IN ("
                + ",".join("?" for _ in chunk) + ")", tuple(chunk)
            )
            for r in hash_rows:
                hashes.setdefault(r["download_id"], []).append(Infohash(r["infohash"], r["kind"]))
        return [_row_to_download(r, hashes.get(r["id"], ())) for r in rows]

    async def find_active_by_hashes(self, hashes: Iterable[str]) -> Download | None:
        """Return the active download owning any of these hashes, if one does."""
        owner = await self._active_owner(self.conn, hashes)
        return await self._load(self.conn, owner) if owner else None

    async def find_by_tag(self, tag: str) -> Download | None:
        """Return the download carrying this qBittorrent tag."""
        row = await self.fetchone("SELECT id FROM download WHERE qbt_tag = ?", (tag,))
        return await self._load(self.conn, row["id"]) if row else None

    async def settled_with_hashes(self, hashes: Iterable[str], exclude: str | None = None) -> list[str]:
        """Return ids of settled downloads that share any of these hashes (processed before)."""
        values = sorted(set(hashes))
        if not values:
            return []
        marks = ",".join("?" for _ in values)
        rows = await self.fetchall(
            "SELECT DISTINCT d.id FROM download d JOIN download_infohash h ON h.download_id = d.id"
            f" WHERE h.infohash IN ({marks}) AND d.state NOT IN {_ACTIVE_SQL} ORDER BY d.id",
            (*values, *_ACTIVE),
        )
        return [r["id"] for r in rows if r["id"] != exclude]

    async def torrent_bytes(self, download_id: str) -> bytes | None:
        """Return the stored `.torrent` bytes of a download, if it was added from a file."""
        row = await self.fetchone(
            "SELECT data FROM download_torrent WHERE download_id = ?", (download_id,)
        )
        return bytes(row["data"]) if row else None

    async def transitions(self, download_id: str) -> list[Transition]:
        """Return a download's history, oldest first."""
        rows = await self.fetchall(
            "SELECT * FROM state_transition WHERE download_id = ? ORDER BY created_at, id", (download_id,)
        )
        return [_transition(r) for r in rows]
