"""`jellybit show` in plain text: the verdict, the reasons in words, the candidates numbered for
`apply --candidate N`, the plan (source → target), the library files once laid out, and what to run next.

The same rules as the panel's review screen (docs/panel.md): the verdict follows the state, blocking
reasons come first, and once a download is decided its recognition's doubts are no longer shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MAX_PLAN_ROWS = 60
PROVIDERS = {"tmdb": "TMDB", "tvdb": "TVDB", "tvmaze": "TVMaze", "imdb": "IMDb"}
MARKS = {"match": "✓", "mismatch": "✗", "info": "·"}
LIVE = ("linked", "copied", "exists")


def _sentence(text: str) -> str:
    text = (text or "").strip()
    return text[:1].upper() + text[1:]


def _titled(title: str | None, year: int | None) -> str:
    return f"{title} ({year})" if title and year else title or ""


def ordered_reasons(reasons: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Blocking first, then the weightiest."""
    return sorted(reasons, key=lambda r: (not r.get("blocking"), -float(r.get("weight") or 0.0)))


def _by_human(timeline: Sequence[Mapping[str, Any]]) -> bool:
    last = next((t for t in reversed(timeline) if t.get("to") == "applying"), None)
    return bool(last and last.get("actor") == "human")


def verdict(data: Mapping[str, Any]) -> str:
    """One line: what is needed or what happened, never at odds with the state."""
    download = data.get("download") or {}
    recognition = data.get("recognition") or {}
    state = download.get("state") or ""
    title = _titled(recognition.get("title") or download.get("title"),
                    recognition.get("year") or download.get("year"))
    if state == "review":
        blocking = [r for r in ordered_reasons(recognition.get("reasons") or []) if r.get("blocking")]
        why = (blocking[0].get("meaning") or blocking[0].get("message")) if blocking else \
            "nothing confirmed it"
        return f"Needs your decision: {why}"
    if state in ("done", "applying"):
        verb = "Laid out" if state == "done" else "Laying out"
        how = "as you decided" if _by_human(data.get("timeline") or []) else "automatically"
        return f"{verb} {how}" + (f": {title}" if title else "")
    error = download.get("error") or {}
    if state == "failed":
        return f"Failed: {error.get('message') or error.get('code') or ''}".rstrip(": ")
    words = {"queued": "Queued: waiting for qBittorrent",
             "downloading": "Downloading; recognized once complete",
             "recognizing": "Recognizing…", "cancelled": "Cancelled: nothing was laid out",
             "reverted": "Undone: its library files were removed",
             "target_missing": "The library files are gone (jellybit relink ID)",
             "orphaned": "The torrent is gone from qBittorrent; the library files remain",
             "deleted": "The torrent and the library files are gone"}
    return words.get(state, state)


def _candidate(number: int, item: Mapping[str, Any], recommended: str | None) -> list[str]:
    first, last = item.get("first_year") or item.get("year"), item.get("last_year")
    years = f"{first}–{last}" if first and last and last != first else str(first or "")
    parts = [item.get("title") or "?", years, {"movie": "film"}.get(item.get("media_type") or "",
                                                                  item.get("media_type") or ""),
             item.get("country") or "", item.get("network") or ""]
    if item.get("season_count"):
        parts.append(f"{item['season_count']} season{'s' if item['season_count'] != 1 else ''}")
    flag = " [recommended]" if recommended and item.get("id") == recommended else ""
    lines = [f"  {number}. " + " · ".join(str(p) for p in parts if p) + flag]
    if item.get("original_title") and item.get("original_title") != item.get("title"):
        lines.append(f"     original title: {item['original_title']}")
    evidence = item.get("evidence") or []
    if evidence:
        lines.append("     " + "   ".join(f"{MARKS.get(e.get('verdict'), '·')} {e.get('text')}"
                                          + (f" (from {e['source']})" if e.get("source") else "")
                                          for e in evidence))
    lines.extend(f"     {name}: {url}" for name, url in pages(item))
    return lines


def pages(item: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(provider, page) of every provider that lists the work, TMDB, TVDB, TVMaze, IMDb in that order."""
    links = dict(item.get("links") or {})
    if item.get("url"):
        links.setdefault(item.get("provider") or "", item["url"])
    order = list(PROVIDERS)
    ranked = sorted(links.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
    return [(PROVIDERS.get(provider, provider), url) for provider, url in ranked]


def _plan(rows: Sequence[Mapping[str, Any]], folder: str | None) -> list[str]:
    lines = ["Plan (source → target):"] + ([f"  folder: {folder}"] if folder else [])
    for row in rows[:MAX_PLAN_ROWS]:
        library = f"{row.get('library')}/" if row.get("library") else ""
        target = f"{library}{row.get('target')}" if row.get("target") else "not laid out"
        mark = f"  [{row.get('status')}]" if row.get("status") in ("collision", "skipped", "copied") else ""
        lines.append(f"  {row.get('source')} → {target}{mark}")
    if len(rows) > MAX_PLAN_ROWS:
        lines.append(f"  … and {len(rows) - MAX_PLAN_ROWS} more (--json lists them all)")
    return lines


def next_commands(download_id: str, state: str, candidates: int) -> list[str]:
    """What to run next for a download in this state."""
    if state == "review":
        chosen = " --candidate 1" if candidates else " --title 'Title' --year YYYY"
        return [f"jellybit apply {download_id}{chosen}     # lay it out (numbers as listed above)",
                f"jellybit refine {download_id} 'a hint, e.g. the 2014 series'     # recognize again",
                f"jellybit reject {download_id}     # nothing is laid out; the torrent stays"]
    if state in ("done", "orphaned"):
        return [f"jellybit undo {download_id}     # remove its library files (the download stays)"]
    if state == "target_missing":
        return [f"jellybit relink {download_id}     # lay the files out again"]
    if state in ("failed", "cancelled", "reverted"):
        return [f"jellybit retry {download_id}"]
    return []


def review_block(data: Mapping[str, Any]) -> list[str]:
    """The verdict, the reasons (in review), the candidates, the plan and what to run next."""
    download = data.get("download") or {}
    recognition = data.get("recognition") or {}
    state = download.get("state") or ""
    lines = [verdict(data)]
    reasons = ordered_reasons(recognition.get("reasons") or [])
    if state == "review" and reasons:
        lines.append("Why:")
        for reason in reasons:
            kind = "blocks" if reason.get("blocking") else "note"
            lines.append(f"  [{kind}] {_sentence(reason.get('message') or reason.get('meaning') or '')}")
    candidates = recognition.get("candidates") or []
    if candidates and state == "review":
        lines.append("Candidates (apply one with --candidate N):")
        for number, item in enumerate(candidates, 1):
            lines.extend(_candidate(number, item, recognition.get("recommended")))
    if recognition.get("plan") and state not in ("done", "reverted"):
        lines.extend(_plan(recognition["plan"], recognition.get("folder")))
    matched = next((c for c in candidates if c.get("chosen")), None)
    if matched is not None and state != "review":
        lines.extend(f"  {name}: {url}" for name, url in pages(matched))
    links = [link for link in data.get("links") or [] if link.get("status") in LIVE]
    if links:
        lines.append("In the library:")
        lines.extend(f"  {link.get('target')}" + ("" if link.get("status") == "linked"
                                                   else f"  [{link.get('status')}]") for link in links)
    commands = next_commands(str(download.get("id") or ""), state, len(candidates))
    if commands:
        lines.append("Next:")
        lines.extend(f"  {command}" for command in commands)
    return lines


def candidate_by_number(data: Mapping[str, Any], number: int) -> str | None:
    """The id of the N-th candidate as `show` lists them (1-based), or None."""
    candidates = (data.get("recognition") or {}).get("candidates") or []
    if 1 <= number <= len(candidates):
        return candidates[number - 1].get("id")
    return None
