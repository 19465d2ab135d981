"""`jellybit show` in plain text: the verdict, the reasons in words, the candidates numbered for
`apply --candidate N`, the plan (source → target), the library files once laid out, and what to run next.

The same rules as the panel's review screen (docs/panel.md): the verdict follows the state, blocking
reasons come first, and once a download is decided its recognition's doubts are no longer shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from jellybit.protocol import (
    CandidatePayload,
    DownloadDetail,
    LinkStatus,
    MediaType,
    PlanItemPayload,
    Provider,
    ReasonPayload,
    RecognitionDetail,
    State,
    TransitionRow,
)

MAX_PLAN_ROWS = 60
MAX_NAMED = 5                   # candidates named in the apply hint
PROVIDERS = {Provider.TMDB: "TMDB", Provider.TVDB: "TVDB", Provider.TVMAZE: "TVMaze", Provider.IMDB: "IMDb"}
MARKS = {"match": "✓", "mismatch": "✗", "info": "·"}
LIVE = (LinkStatus.LINKED, LinkStatus.COPIED, LinkStatus.EXISTS)


def _sentence(text: str) -> str:
    text = (text or "").strip()
    return text[:1].upper() + text[1:]


def _titled(title: str | None, year: int | None) -> str:
    return f"{title} ({year})" if title and year else title or ""


def ordered_reasons(reasons: Sequence[ReasonPayload]) -> list[ReasonPayload]:
    """Blocking first, then the weightiest."""
    return sorted(reasons, key=lambda r: (not r.blocking, -r.weight))


def _by_human(timeline: Sequence[TransitionRow]) -> bool:
    last = next((t for t in reversed(timeline) if t.to is State.APPLYING), None)
    return bool(last and last.actor == "human")


def verdict(data: DownloadDetail) -> str:
    """One line: what is needed or what happened, never at odds with the state."""
    download, recognition = data.download, data.recognition
    state = download.state
    title = _titled((recognition.title if recognition else None) or download.title,
                    (recognition.year if recognition else None) or download.year)
    still = (f" (still downloading, {round(download.progress * 100)}%: a decision is applied when the files "
             "arrive)" if download.awaiting_files else "")
    if state is State.REVIEW:
        blocking = [r for r in ordered_reasons(recognition.reasons if recognition else []) if r.blocking]
        why = (blocking[0].meaning or blocking[0].message) if blocking else "nothing confirmed it"
        return f"Needs your decision: {why}{still}"
    if state is State.APPLYING and download.awaiting_files:
        how = "as you decided" if _by_human(data.timeline) else "automatically"
        return f"Decided {how}" + (f": {title}" if title else "") + still
    if state in (State.DONE, State.APPLYING):
        verb = "Laid out" if state is State.DONE else "Laying out"
        how = "as you decided" if _by_human(data.timeline) else "automatically"
        return f"{verb} {how}" + (f": {title}" if title else "")
    if state is State.FAILED:
        error = download.error
        return f"Failed: {(error.message or error.code) if error else ''}".rstrip(": ")
    words = {State.QUEUED: "Queued: waiting for qBittorrent",
             State.DOWNLOADING: "Downloading; recognized once qBittorrent lists the files",
             State.RECOGNIZING: "Recognizing…", State.CANCELLED: "Cancelled: nothing was laid out",
             State.REVERTED: "Undone: its library files were removed",
             State.TARGET_MISSING: "The library files are gone (jellybit relink ID)",
             State.ORPHANED: "The torrent is gone from qBittorrent; the library files remain",
             State.DELETED: "The torrent and the library files are gone"}
    return words.get(state, state.value)


def _candidate(number: int, item: CandidatePayload, recommended: str | None) -> list[str]:
    first, last = item.first_year or item.year, item.last_year
    years = f"{first}–{last}" if first and last and last != first else str(first or "")
    kind = "film" if item.media_type is MediaType.MOVIE else (item.media_type or "")
    parts = [item.title or "?", years, kind, item.country or "", item.network or ""]
    if item.season_count:
        parts.append(f"{item.season_count} season{'s' if item.season_count != 1 else ''}")
    flag = " [recommended]" if recommended and item.id == recommended else ""
    lines = [f"  {number}. " + " · ".join(str(p) for p in parts if p) + flag]
    if item.original_title and item.original_title != item.title:
        lines.append(f"     original title: {item.original_title}")
    if item.evidence:
        lines.append("     " + "   ".join(f"{MARKS.get(e.verdict, '·')} {e.text}"
                                          + (f" (from {e.source})" if e.source else "")
                                          for e in item.evidence))
    lines.extend(f"     {name}: {url}" for name, url in pages(item))
    return lines


def pages(item: CandidatePayload) -> list[tuple[str, str]]:
    """(provider, page) of every provider that lists the work, TMDB, TVDB, TVMaze, IMDb in that order."""
    links = dict(item.links)
    if item.url:
        links.setdefault(item.provider, item.url)
    order = list(PROVIDERS)
    ranked = sorted(links.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
    return [(PROVIDERS.get(provider, provider), url) for provider, url in ranked]


def _plan(rows: Sequence[PlanItemPayload], folder: str | None) -> list[str]:
    lines = ["Plan (source → target):"] + ([f"  folder: {folder}"] if folder else [])
    for row in rows[:MAX_PLAN_ROWS]:
        library = f"{row.library}/" if row.library else ""
        target = f"{library}{row.target}" if row.target else "not laid out"
        mark = f"  [{row.status}]" if row.status in ("collision", "skipped", "copied", "held") else ""
        lines.append(f"  {row.source} → {target}{mark}")
    if len(rows) > MAX_PLAN_ROWS:
        lines.append(f"  … and {len(rows) - MAX_PLAN_ROWS} more (--json lists them all)")
    return lines


def _short(item: CandidatePayload) -> str:
    year = item.first_year or item.year
    return f"{item.title or '?'}" + (f" ({year})" if year else "")


def next_commands(download_id: str, state: State | str,
                  candidates: Sequence[CandidatePayload] = (), *, upgrade: bool = False) -> list[str]:
    """What to run next for a download in this state (the apply line names the candidates it means;
    `upgrade`: its review asks about a better copy)."""
    if state == State.REVIEW and upgrade:
        return [f"jellybit upgrade {download_id} keep-both     # lay it beside the copy in the library",
                f"jellybit upgrade {download_id} replace       # the old library link goes (undo: back)",
                f"jellybit upgrade {download_id} skip          # lay nothing of this copy",
                f"jellybit reject {download_id}     # nothing is laid out; the torrent stays"]
    if state == State.REVIEW:
        if candidates:
            shown = [f"{n} = {_short(item)}" for n, item in enumerate(candidates[:MAX_NAMED], 1)]
            more = f", … {len(candidates)}" if len(candidates) > MAX_NAMED else ""
            apply = (f"jellybit apply {download_id} --candidate N     # lay it out as candidate N: "
                     + "; ".join(shown) + more)
        else:
            apply = (f"jellybit apply {download_id} --type movie|series --title 'Title' --year YYYY     "
                     "# lay it out as you name it (no candidate was found)")
        return [apply,
                f"jellybit refine {download_id} 'a hint, e.g. the 2014 series'     # recognize again",
                f"jellybit reject {download_id}     # nothing is laid out; the torrent stays"]
    if state in (State.DONE, State.ORPHANED):
        return [f"jellybit undo {download_id}     # remove its library files (the download stays)"]
    if state == State.TARGET_MISSING:
        return [f"jellybit relink {download_id}     # lay the files out again"]
    if state in (State.FAILED, State.CANCELLED, State.REVERTED):
        return [f"jellybit retry {download_id}"]
    return []


def review_block(data: DownloadDetail) -> list[str]:
    """The verdict, the reasons (in review), the candidates, the plan and what to run next."""
    download, recognition = data.download, data.recognition
    state = download.state
    lines = [verdict(data)]
    reasons = ordered_reasons(recognition.reasons if recognition else [])
    if state is State.REVIEW and reasons:
        lines.append("Why:")
        for reason in reasons:
            kind = "blocks" if reason.blocking else "note"
            lines.append(f"  [{kind}] {_sentence(reason.message or reason.meaning or '')}")
    held = [row for row in (recognition.plan if recognition else []) if row.status == "held"
            and row.role == "video"]
    if held and state is State.REVIEW:
        lines.append("Already in your library:")
        lines.extend(f"  {row.source}: {row.note}" for row in held)
    candidates = recognition.candidates if recognition else []
    if recognition is not None and recognition.films:
        lines.extend(films_block(recognition, review=state is State.REVIEW))
    elif candidates and state is State.REVIEW:
        lines.append("Candidates (apply one with --candidate N):")
        for number, item in enumerate(candidates, 1):
            lines.extend(_candidate(number, item, recognition.recommended if recognition else None))
    if recognition is not None and recognition.plan and state not in (State.DONE, State.REVERTED):
        lines.extend(_plan(recognition.plan, recognition.folder))
    matched = next((c for c in candidates if c.chosen), None)
    if matched is not None and state is not State.REVIEW:
        lines.extend(f"  {name}: {url}" for name, url in pages(matched))
    links = [link for link in data.links if link.status in LIVE]
    if links:
        lines.append("In the library:")
        lines.extend(f"  {link.target}" + ("" if link.status is LinkStatus.LINKED else f"  [{link.status}]")
                     for link in links)
    commands = next_commands(download.id, state, candidates, upgrade=bool(held))
    if commands:
        lines.append("Next:")
        lines.extend(f"  {command}" for command in commands)
    return lines


def films_block(recognition: RecognitionDetail, *, review: bool) -> list[str]:
    """A movie pack film by film: its match, how sure, its reasons and (in review) its candidates."""
    lines = ["Films (each matched on its own; --candidate N decides the film it is listed under):"]
    numbered = list(enumerate(recognition.candidates, 1))
    for film in recognition.films:
        match = _titled(film.match_title, film.match_year) if film.match_title else "no match"
        where = f" · {film.provider} {film.provider_id}" if film.provider else ""
        sure = "sure" if film.confirmed else "needs a human"
        confidence = f", confidence {film.confidence:.2f}" if film.confidence is not None else ""
        lines.append(f"  {_titled(film.title, film.year)} → {match}{where}  [{sure}{confidence}]")
        for reason in ordered_reasons(film.reasons):
            lines.append(f"     [{'blocks' if reason.blocking else 'note'}] {_sentence(reason.message)}")
        if review and not film.confirmed:
            for number, item in numbered:
                if item.film == film.key:
                    lines.extend("  " + line for line in _candidate(number, item, recognition.recommended))
    return lines


def candidate_by_number(data: DownloadDetail, number: int) -> str | None:
    """The id of the N-th candidate as `show` lists them (1-based), or None."""
    candidates = data.recognition.candidates if data.recognition else []
    if 1 <= number <= len(candidates):
        return candidates[number - 1].id
    return None
