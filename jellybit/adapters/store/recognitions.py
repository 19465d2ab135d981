"""Recognition attempts, their metadata candidates, hints and overrides."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import aiosqlite

from jellybit import clock, ident
from jellybit.adapters.store.base import StoreBase
from jellybit.core.records import (
    Candidate,
    MediaType,
    Plan,
    Reason,
    Recognition,
    RecognitionDraft,
    Recommendation,
)
from jellybit.core.store_records import Hint
from jellybit.errors import NotFound


def _reasons_json(reasons: tuple[Reason, ...]) -> str:
    return json.dumps(
        [{"code": r.code, "message": r.message, "weight": r.weight, "blocking": r.blocking} for r in reasons],
        ensure_ascii=False, sort_keys=True,
    )


def _reasons(text: str | None) -> tuple[Reason, ...]:
    return tuple(
        Reason(r["code"], r["message"], float(r.get("weight", 0.0)), bool(r.get("blocking", False)))
        for r in json.loads(text or "[]")
    )


def _candidate(row: aiosqlite.Row) -> Candidate:
    return Candidate(
        provider=row["provider"], provider_id=row["provider_id"],
        media_type=MediaType(row["media_type"]) if row["media_type"] else None,
        title=row["title"] or "", year=row["year"], original_title=row["original_title"],
        url=row["url"], poster_url=row["poster_url"], overview=row["overview"],
        distance=row["distance"], details=json.loads(row["details"] or "{}"),
        chosen=bool(row["chosen"]), id=row["id"],
    )


def _recognition(
    row: aiosqlite.Row, candidates: tuple[Candidate, ...], plan: Plan | None = None
) -> Recognition:
    return Recognition(
        media_type=MediaType(row["media_type"]) if row["media_type"] else None,
        title=row["title"], year=row["year"], plan=Plan.from_json(row["plan"]) if plan is None else plan,
        original_title=row["original_title"], provider=row["provider"],
        provider_id=row["provider_id"], confidence=row["confidence"],
        recommendation=Recommendation(row["recommendation"] or Recommendation.NONE),
        reasons=_reasons(row["reasons"]), raw_llm=row["raw_llm"], candidates=candidates,
        id=row["id"], download_id=row["download_id"], attempt_no=row["attempt_no"],
        is_current=bool(row["is_current"]), created_at=row["created_at"],
    )


class RecognitionsMixin(StoreBase):
    """Store methods for `recognition`, `metadata_candidate`, `hint` and `override`."""

    conn: aiosqlite.Connection

    async def _require_download(self, conn: aiosqlite.Connection, download_id: str) -> None:
        async with conn.execute("SELECT 1 FROM download WHERE id = ?", (download_id,)) as cur:
            if await cur.fetchone() is None:
                raise NotFound(f"unknown download id {download_id!r}")

    async def _candidates(self, conn: aiosqlite.Connection, recognition_id: str) -> tuple[Candidate, ...]:
        async with conn.execute(
            "SELECT * FROM metadata_candidate WHERE recognition_id = ? ORDER BY created_at, id",
            (recognition_id,),
        ) as cur:
            return tuple(_candidate(r) for r in await cur.fetchall())

    async def save_recognition(self, download_id: str, draft: RecognitionDraft) -> Recognition:
        """Store a draft as the download's new current recognition (with its candidates)."""
        async with self.write() as conn:
            await self._require_download(conn, download_id)
            async with conn.execute(
                "SELECT COALESCE(MAX(attempt_no), 0) AS n FROM recognition WHERE download_id = ?",
                (download_id,),
            ) as cur:
                row = await cur.fetchone()
            attempt = int(row["n"]) + 1 if row else 1
            await conn.execute(
                "UPDATE recognition SET is_current = 0 WHERE download_id = ? AND is_current = 1",
                (download_id,),
            )
            recognition_id = ident.new_id()
            now = clock.now()
            await conn.execute(
                "INSERT INTO recognition (id, download_id, attempt_no, is_current, media_type, title,"
                " original_title, year, provider, provider_id, confidence, recommendation, reasons,"
                " raw_llm, plan, created_at) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (recognition_id, download_id, attempt,
                 draft.media_type.value if draft.media_type else None, draft.title,
                 draft.original_title, draft.year, draft.provider, draft.provider_id,
                 draft.confidence, draft.recommendation.value, _reasons_json(draft.reasons),
                 draft.raw_llm, draft.plan.to_json(), now),
            )
            for candidate in draft.candidates:
                await conn.execute(
                    "INSERT INTO metadata_candidate (id, recognition_id, provider, provider_id,"
                    " media_type, title, original_title, year, url, poster_url, overview, distance,"
                    " details, chosen, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (ident.new_id(), recognition_id, candidate.provider, candidate.provider_id,
                     candidate.media_type.value if candidate.media_type else None, candidate.title,
                     candidate.original_title, candidate.year, candidate.url, candidate.poster_url,
                     candidate.overview, candidate.distance,
                     json.dumps(candidate.details, ensure_ascii=False, sort_keys=True),
                     int(candidate.chosen), now),
                )
            async with conn.execute("SELECT * FROM recognition WHERE id = ?", (recognition_id,)) as cur:
                stored = await cur.fetchone()
            assert stored is not None
            # The plan just stored is the draft's, read back equal (to_json/from_json round-trip, proven by
            # tests/core/test_records_json.py): return that object rather than parse thousands of items
            # again, which also lets the layouter see at once that it is the plan it previewed.
            return _recognition(stored, await self._candidates(conn, recognition_id), draft.plan)

    async def current_recognition(self, download_id: str) -> Recognition | None:
        """Return the current recognition with its candidates, or None before the first one."""
        async with self.conn.execute(
            "SELECT * FROM recognition WHERE download_id = ? AND is_current = 1", (download_id,)
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        return _recognition(row, await self._candidates(self.conn, row["id"]))

    async def current_recognitions(self, download_ids: Iterable[str]) -> dict[str, Recognition]:
        """The current recognitions of many downloads in one query (without candidates, for lists)."""
        ids = sorted(set(download_ids))
        found: dict[str, Recognition] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" for _ in chunk)
            async with self.conn.execute(
                f"SELECT * FROM recognition WHERE is_current = 1 AND download_id IN ({marks})", chunk
            ) as cur:
                for row in await cur.fetchall():
                    found[row["download_id"]] = _recognition(row, ())
        return found

    async def recognitions(self, download_id: str) -> list[Recognition]:
        """Return every recognition attempt of a download, oldest first, with candidates."""
        async with self.conn.execute(
            "SELECT * FROM recognition WHERE download_id = ? ORDER BY attempt_no", (download_id,)
        ) as cur:
            rows = await cur.fetchall()
        return [_recognition(r, await self._candidates(self.conn, r["id"])) for r in rows]

    async def choose_candidate(self, download_id: str, candidate_id: str) -> Candidate:
        """Mark one candidate of the current recognition as chosen (the others not)."""
        async with self.write() as conn:
            async with conn.execute(
                "SELECT c.recognition_id FROM metadata_candidate c JOIN recognition r"
                " ON r.id = c.recognition_id WHERE c.id = ? AND r.download_id = ? AND r.is_current = 1",
                (candidate_id, download_id),
            ) as cur:
                row = await cur.fetchone()
            if row is None:
                raise NotFound(f"unknown candidate id {candidate_id!r} for download {download_id}")
            await conn.execute(
                "UPDATE metadata_candidate SET chosen = CASE WHEN id = ? THEN 1 ELSE 0 END"
                " WHERE recognition_id = ?",
                (candidate_id, row["recognition_id"]),
            )
            async with conn.execute("SELECT * FROM metadata_candidate WHERE id = ?", (candidate_id,)) as cur:
                chosen = await cur.fetchone()
            assert chosen is not None
            return _candidate(chosen)

    async def add_hint(self, download_id: str, text: str) -> Hint:
        """Store a hint for a download."""
        async with self.write() as conn:
            await self._require_download(conn, download_id)
            hint = Hint(ident.new_id(), download_id, text, clock.now())
            await conn.execute(
                "INSERT INTO hint (id, download_id, text, created_at) VALUES (?, ?, ?, ?)",
                (hint.id, hint.download_id, hint.text, hint.created_at),
            )
            return hint

    async def hints(self, download_id: str) -> list[Hint]:
        """Return a download's hints, oldest first."""
        rows = await self.fetchall(
            "SELECT * FROM hint WHERE download_id = ? ORDER BY created_at, id", (download_id,)
        )
        return [Hint(r["id"], r["download_id"], r["text"], r["created_at"]) for r in rows]

    async def set_overrides(self, download_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """Pin fields (JSON values) in one transaction; a None value unpins the field."""
        async with self.write() as conn:
            await self._require_download(conn, download_id)
            now = clock.now()
            for name, value in values.items():
                if value is None:
                    await conn.execute(
                        "DELETE FROM override WHERE download_id = ? AND field = ?", (download_id, name)
                    )
                    continue
                await conn.execute(
                    "INSERT INTO override (id, download_id, field, value, created_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (download_id, field)"
                    " DO UPDATE SET value = excluded.value, created_at = excluded.created_at",
                    (ident.new_id(), download_id, name,
                     json.dumps(value, ensure_ascii=False, sort_keys=True), now),
                )
        return await self.overrides(download_id)

    async def overrides(self, download_id: str) -> dict[str, Any]:
        """Return a download's pinned fields."""
        rows = await self.fetchall(
            "SELECT field, value FROM override WHERE download_id = ? ORDER BY field", (download_id,)
        )
        return {r["field"]: json.loads(r["value"]) for r in rows}
