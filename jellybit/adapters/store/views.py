"""What a request reads, in one trip to the reader's thread: a download's record, a page, the summary.

Each public method runs one plain function on the read-only connection (`reader.py`); the
functions issue their queries synchronously, so a `get` is one trip however many tables it
reads, and a page of the history is one joined query (downloads, their hashes and their
current recognition's headline) plus its count.

A *headline* is the current recognition without its plan's items: type, title, original title,
year, provider id, folder, reasons, and of its candidates only the one whose poster the
payloads show (the chosen one with a poster, else the matched provider id's) - what lists,
retained topics, the summary and most events show, without parsing a plan of thousands of files.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import cast

from jellybit.adapters.store.base import StoreBase
from jellybit.adapters.store.downloads import _download_filter, _row_to_download, _transition
from jellybit.adapters.store.links import _SELECT as _LINKS_SELECT
from jellybit.adapters.store.links import _link
from jellybit.adapters.store.reader import Reader, TooBig
from jellybit.adapters.store.recognitions import _candidate, _reasons, _recognition
from jellybit.core.links import LIVE_STATUSES
from jellybit.core.models import Download, Infohash, Transition
from jellybit.core.records import Candidate, MediaType, Plan, Recognition, Recommendation
from jellybit.core.states import State
from jellybit.core.store_records import (
    DownloadRecord,
    DownloadRow,
    DownloadView,
    Hint,
    PageRecord,
    ReconcileItem,
    RowPage,
    SummaryRecord,
)

# The candidate whose poster a headline shows: the chosen one with a poster, else the matched id's.
_POSTER = ("FROM metadata_candidate c WHERE c.recognition_id = r.id AND c.poster_url IS NOT NULL"
           " AND c.poster_url != '' AND (c.chosen = 1 OR (r.provider_id IS NOT NULL AND r.provider_id != ''"
           " AND c.provider = r.provider AND c.provider_id = r.provider_id))"
           " ORDER BY c.chosen DESC, c.created_at, c.id LIMIT 1")
_HEADLINE = ("r.id AS r_id, r.attempt_no AS r_attempt_no, r.media_type AS r_media_type, r.title AS r_title,"
             " r.original_title AS r_original_title, r.year AS r_year, r.provider AS r_provider,"
             " r.provider_id AS r_provider_id, r.confidence AS r_confidence,"
             " r.recommendation AS r_recommendation, r.created_at AS r_created_at, r.reasons AS r_reasons,"
             f" json_extract(r.plan, '$.folder') AS r_folder, (SELECT c.id {_POSTER}) AS r_poster_candidate")
_HASHES = ("(SELECT group_concat(h.kind || ':' || h.infohash, ',') FROM download_infohash h"
           " WHERE h.download_id = d.id) AS d_hashes")
_RECORD = f"d.*, {_HASHES}, {_HEADLINE}"
# A list row's columns (`DownloadRow`), named as its keys.
_ROW = ("d.id, d.source_type, d.source_ref, d.display_name, d.context, d.state, d.error_code, d.error_msg,"
        " d.total_size, d.progress, d.dl_speed, d.eta, d.torrent_state, d.num_seeds, d.num_peers,"
        " d.defer_until, d.created_at, d.updated_at, d.settled_at, d.jellyfin_status, d.jellyfin_item_id,"
        " d.jellyfin_url, d.jellyfin_note, d.jellyfin_checked_at, (SELECT group_concat(h.infohash, ',')"
        " FROM download_infohash h WHERE h.download_id = d.id) AS infohashes, r.media_type, r.title,"
        " r.original_title, r.year, r.provider, r.provider_id, json_extract(r.plan, '$.folder') AS folder,"
        f" (SELECT c.poster_url {_POSTER}) AS poster_url")


# What a `get` may read on the event loop's thread (reader.py): a plan of about a hundred files
# parses in about 1 ms; a pack of thousands (17 ms at 2,000 files) is read on the reader's thread.
INLINE_PLAN_BYTES = 32_768
INLINE_LINKS = 100
INLINE_ROWS = 100          # a `list` page up to this many rows (the default is 50) without a text search


def _hashes(text: str | None) -> list[Infohash]:
    if not text:
        return []
    return [Infohash(value, kind) for kind, _, value in (part.partition(":") for part in text.split(","))]


def _split(conn: sqlite3.Connection, row: sqlite3.Row) -> tuple[Download, Recognition | None]:
    """A joined row: the download (with its hashes) and its recognition headline, if any."""
    data = dict(row)
    headline = {k[2:]: data.pop(k) for k in list(data) if k.startswith("r_")}
    download = _row_to_download(
        {k: v for k, v in data.items() if k != "d_hashes"}, _hashes(data.get("d_hashes")))
    if headline["id"] is None:
        return download, None
    poster: tuple[Candidate, ...] = ()
    if headline["poster_candidate"] is not None:
        found = conn.execute("SELECT * FROM metadata_candidate WHERE id = ?",
                             (headline["poster_candidate"],)).fetchone()
        poster = (_candidate(found),) if found is not None else ()
    return download, Recognition(
        media_type=MediaType(headline["media_type"]) if headline["media_type"] else None,
        title=headline["title"], year=headline["year"], plan=Plan(folder=headline["folder"]),
        original_title=headline["original_title"], provider=headline["provider"],
        provider_id=headline["provider_id"], confidence=headline["confidence"],
        recommendation=Recommendation(headline["recommendation"] or Recommendation.NONE),
        reasons=_reasons(headline["reasons"]), candidates=poster,
        id=headline["id"], download_id=download.id, attempt_no=headline["attempt_no"],
        created_at=headline["created_at"])


def _page_sql(where: str, order: str, outer: str = "d.id DESC", columns: str = _RECORD) -> str:
    # The page's ids first (the filter and LIMIT on `download` alone), then its rows by primary key:
    # a subquery of whole rows cost a quarter more (it copies every column, then sorts again).
    return (f"SELECT {columns} FROM download d"
            f" LEFT JOIN recognition r ON r.download_id = d.id AND r.is_current = 1"
            f" WHERE d.id IN (SELECT id FROM download{where} {order}) ORDER BY {outer}")


def _count(conn: sqlite3.Connection, states: Iterable[State] | None, text: str | None) -> int:
    where, params = _download_filter(states, text)
    return conn.execute("SELECT COUNT(*) FROM download" + (where or ""), params).fetchone()[0]


def read_page(conn: sqlite3.Connection, states: Iterable[State] | None, text: str | None, limit: int,
              offset: int, after: str | None, with_total: bool) -> PageRecord:
    """One page (newest first) by OFFSET, or by keyset after an id; one joined query plus the count."""
    where, params = _download_filter(states, text)
    if where is None:
        return PageRecord(())
    if after is not None:
        where = (where + " AND " if where else " WHERE ") + "id < ?"
        params = [*params, after]
    sql = _page_sql(where, "ORDER BY id DESC LIMIT ? OFFSET ?")
    rows = conn.execute(sql, (*params, limit, 0 if after is not None else offset)).fetchall()
    items, headlines = [], {}
    for row in rows:
        download, headline = _split(conn, row)
        items.append(download)
        if headline is not None:
            headlines[download.id] = headline
    return PageRecord(tuple(items), headlines, _count(conn, states, text) if with_total else 0)


def read_rows(conn: sqlite3.Connection, states: Iterable[State] | None, text: str | None, limit: int,
              offset: int) -> RowPage:
    """`read_page`'s page by OFFSET as plain rows (`DownloadRow`), with the total; one joined query."""
    where, params = _download_filter(states, text)
    if where is None:
        return RowPage(())
    cursor = conn.cursor()
    # Plain tuples: a `sqlite3.Row` finds each column by a case-insensitive scan of the names.
    cursor.row_factory = None
    sql = _page_sql(where, "ORDER BY id DESC LIMIT ? OFFSET ?", columns=_ROW)
    cursor.execute(sql, (*params, limit, offset))
    names = [column[0] for column in cursor.description]
    rows: list[DownloadRow] = []
    for values in cursor:
        row = dict(zip(names, values, strict=True))
        row["infohashes"] = sorted(row["infohashes"].split(",")) if row["infohashes"] else []
        rows.append(cast(DownloadRow, row))
    return RowPage(tuple(rows), _count(conn, states, text))


def _one(conn: sqlite3.Connection, download_id: str) -> tuple[Download, Recognition | None] | None:
    row = conn.execute(_page_sql(" WHERE id = ?", ""), (download_id,)).fetchone()
    return _split(conn, row) if row is not None else None


def _download(conn: sqlite3.Connection, download_id: str) -> Download | None:
    """A download with its hashes and nothing else (`get` reads the full recognition on its own)."""
    row = conn.execute(f"SELECT d.*, {_HASHES} FROM download d WHERE d.id = ?", (download_id,)).fetchone()
    if row is None:
        return None
    data = dict(row)
    return _row_to_download(data, _hashes(data.pop("d_hashes")))


def _current(conn: sqlite3.Connection, download_id: str) -> Recognition | None:
    row = conn.execute("SELECT * FROM recognition WHERE download_id = ? AND is_current = 1",
                       (download_id,)).fetchone()
    if row is None:
        return None
    candidates = conn.execute(
        "SELECT * FROM metadata_candidate WHERE recognition_id = ? ORDER BY created_at, id", (row["id"],))
    return _recognition(row, tuple(_candidate(c) for c in candidates))


def _hint_rows(conn: sqlite3.Connection, download_id: str) -> list[Hint]:
    rows = conn.execute("SELECT * FROM hint WHERE download_id = ? ORDER BY created_at, id", (download_id,))
    return [Hint(r["id"], r["download_id"], r["text"], r["created_at"]) for r in rows]


def _transition_rows(conn: sqlite3.Connection, download_id: str) -> list[Transition]:
    rows = conn.execute("SELECT * FROM state_transition WHERE download_id = ? ORDER BY created_at, id",
                        (download_id,))
    return [_transition(r) for r in rows]


def read_small_record(conn: sqlite3.Connection, download_id: str) -> DownloadRecord | None:
    """`read_record`, or `TooBig` when the current plan or the links are more than the loop should parse."""
    plan, links = conn.execute(
        "SELECT (SELECT length(plan) FROM recognition WHERE download_id = ?1 AND is_current = 1),"
        " (SELECT COUNT(*) FROM (SELECT 1 FROM apply_batch b JOIN file_link fl ON fl.batch = b.seq"
        "  WHERE b.download_id = ?1 LIMIT ?2))",   # counted no further than the limit
        (download_id, INLINE_LINKS + 1)).fetchone()
    if (plan or 0) > INLINE_PLAN_BYTES or links > INLINE_LINKS:
        raise TooBig(download_id)
    return read_record(conn, download_id)


def read_record(conn: sqlite3.Connection, download_id: str) -> DownloadRecord | None:
    """Everything `get` shows, or None for an unknown id."""
    download = _download(conn, download_id)
    if download is None:
        return None
    overrides = conn.execute("SELECT field, value FROM override WHERE download_id = ? ORDER BY field",
                             (download_id,))
    links = conn.execute(f"{_LINKS_SELECT} WHERE b.download_id = ? ORDER BY fl.id", (download_id,))
    return DownloadRecord(
        download=download, transitions=tuple(_transition_rows(conn, download_id)),
        recognition=_current(conn, download_id), hints=tuple(_hint_rows(conn, download_id)),
        overrides={r["field"]: json.loads(r["value"]) for r in overrides},
        links=tuple(_link(r) for r in links))


def read_view(conn: sqlite3.Connection, download_id: str) -> DownloadView | None:
    """A download and what its retained topics show (the full recognition only while in review)."""
    found = _one(conn, download_id)
    if found is None:
        return None
    download, headline = found
    if download.state is not State.REVIEW:
        return DownloadView(download, headline)
    requested = conn.execute(
        "SELECT created_at FROM state_transition WHERE download_id = ? AND to_state = ?"
        " ORDER BY created_at DESC, id DESC LIMIT 1", (download_id, State.REVIEW.value)).fetchone()
    return DownloadView(download, _current(conn, download_id),
                        tuple(h.text for h in _hint_rows(conn, download_id)),
                        requested[0] if requested else None)


def read_summary(conn: sqlite3.Connection, now: str, waiting: int) -> SummaryRecord:
    """Counts per state, the review queue (not deferred right now), the download that reached done
    last (by when it settled), and the `waiting` reviews that have waited longest, with headlines."""
    counts = {State(r[0]): r[1] for r in conn.execute("SELECT state, COUNT(*) FROM download GROUP BY state")}
    undeferred = " WHERE state = ? AND (defer_until IS NULL OR defer_until = '' OR defer_until <= ?)"
    queue = conn.execute("SELECT COUNT(*) FROM download" + undeferred, (State.REVIEW.value, now)).fetchone()
    last_sql = _page_sql(" WHERE state = ? AND settled_at IS NOT NULL",
                         "ORDER BY settled_at DESC, id DESC LIMIT 1", "d.settled_at DESC, d.id DESC")
    last = conn.execute(last_sql, (State.DONE.value,)).fetchone()
    oldest = []
    if waiting > 0:
        oldest_sql = _page_sql(undeferred, "ORDER BY updated_at, id DESC LIMIT ?", "d.updated_at, d.id DESC")
        oldest = conn.execute(oldest_sql, (State.REVIEW.value, now, waiting)).fetchall()
    return SummaryRecord(counts, queue[0], _split(conn, last) if last is not None else None,
                         tuple(_split(conn, row) for row in oldest))


def read_reconcile_page(conn: sqlite3.Connection, states: Sequence[State], after: str,
                        limit: int) -> list[ReconcileItem]:
    """The next `limit` downloads in these states after an id (keyset), with hashes and live links."""
    marks = ",".join("?" for _ in states)
    live = ",".join("?" for _ in LIVE_STATUSES)
    rows = conn.execute(
        "SELECT d.id, d.state, d.qbt_tag, (SELECT group_concat(h.infohash, ',') FROM download_infohash h"
        " WHERE h.download_id = d.id) AS hashes, df.path || '/' || fl.dst_name AS dst_path, fl.dst_ino"
        f" FROM (SELECT id, state, qbt_tag FROM download WHERE state IN ({marks}) AND id > ?"
        " ORDER BY id LIMIT ?) d"
        " LEFT JOIN apply_batch b ON b.download_id = d.id"
        f" LEFT JOIN file_link fl ON fl.batch = b.seq AND fl.status IN ({live})"
        " LEFT JOIN link_folder df ON df.id = fl.dst_folder"
        " ORDER BY d.id, fl.id",
        (*(s.value for s in states), after, limit, *(s.value for s in LIVE_STATUSES)))
    grouped: dict[str, tuple[sqlite3.Row, list[tuple[str, int | None]]]] = {}
    for row in rows:
        entry = grouped.setdefault(row["id"], (row, []))
        if row["dst_path"] is not None:
            entry[1].append((row["dst_path"], row["dst_ino"]))
    return [ReconcileItem(first["id"], State(first["state"]), first["qbt_tag"],
                          frozenset((first["hashes"] or "").split(",")) - {""}, tuple(links))
            for first, links in grouped.values()]


class ViewsMixin(StoreBase):
    """Store methods that answer a whole request in one trip to the reader."""

    reader: Reader

    async def download_record(self, download_id: str) -> DownloadRecord | None:
        """Everything `get` shows about a download (None: unknown id)."""
        return await self.reader.run(lambda conn: read_record(conn, download_id),
                                     inline=lambda conn: read_small_record(conn, download_id))

    async def download_rows(
        self, *, states: Iterable[State] | None = None, text: str | None = None, limit: int = 50,
        offset: int = 0,
    ) -> RowPage:
        """The same page as `download_page` (by OFFSET, with the total) as plain rows, for the wire."""
        wanted: Sequence[State] | None = None if states is None else tuple(states)

        def read(conn: sqlite3.Connection) -> RowPage:
            return read_rows(conn, wanted, text, limit, offset)

        # A page without a text search is bounded by its limit (50 rows: 2.6 ms at 100,000 downloads
        # and an offset of 50,000); a text search scans the table, on the reader's thread.
        return await self.reader.run(read, inline=None if text or limit > INLINE_ROWS else read)

    async def download_view(self, download_id: str) -> DownloadView | None:
        """A download and what its retained topics show (None: unknown id)."""
        return await self.reader.run(lambda conn: read_view(conn, download_id))

    async def download_page(
        self, *, states: Iterable[State] | None = None, text: str | None = None, limit: int = 50,
        offset: int = 0, after: str | None = None, with_total: bool = True,
    ) -> PageRecord:
        """Downloads newest first with their headlines; by OFFSET, or after an id (keyset)."""
        wanted: Sequence[State] | None = None if states is None else tuple(states)
        return await self.reader.run(
            lambda conn: read_page(conn, wanted, text, limit, offset, after, with_total))

    async def reconcile_page(self, states: Sequence[State], after: str, limit: int) -> list[ReconcileItem]:
        """One chunk for reconciliation: downloads after an id with their hashes and live links."""
        wanted = tuple(states)
        return await self.reader.run(lambda conn: read_reconcile_page(conn, wanted, after, limit))

    async def summary_record(self, now: str, *, waiting: int = 0) -> SummaryRecord:
        """Counts per state, the review queue at `now`, the last download done, the longest waiting."""
        return await self.reader.run(lambda conn: read_summary(conn, now, waiting))
