"""`jellybit show` in plain text: the verdict, the reasons in words, the candidates numbered for
`apply --candidate N`, the plan (source → target), the library files once laid out, and what to run next.

The same rules as the panel's review screen (docs/panel.md): the verdict follows the state, blocking
reasons come first, and once a download is decided its recognition's doubts are no longer shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from jellybit.present import (
    actions,
    is_live,
    ordered_reasons,
    provider_name,
    sentence,
    title_line,
    verdict,
    verdict_line,
)
from jellybit.present import pages as provider_pages
from jellybit.protocol import (
    CandidatePayload,
    DownloadDetail,
    LinkStatus,
    MediaType,
    PlanItemPayload,
    RecognitionDetail,
    State,
)

MAX_PLAN_ROWS = 60
MAX_NAMED = 5                   # candidates named in the apply hint
MARKS = {"match": "✓", "mismatch": "✗", "info": "·"}
# What `Next:` says for each action the state allows (apply and upgrade have lines of their own; a
# command the table gains later is named plainly, `jellybit <command> ID`, until it has words here).
LINES = {
    "refine": "jellybit refine {id} 'a hint, e.g. the 2014 series'     # recognize again",
    "reject": "jellybit reject {id}     # nothing is laid out; the torrent stays",
    "defer": "jellybit defer {id} --hours 24     # keep it in review, without notifications",
    "undo": "jellybit undo {id}     # remove its library files (the download stays)",
    "relink": "jellybit relink {id}     # lay the files out again",
    "retry": "jellybit retry {id}",
    "cancel": "jellybit cancel {id}     # stop it; nothing is laid out (--delete-data also removes the data)",
}
UPGRADE_LINES = (
    "jellybit upgrade {id} keep-both     # lay it beside the copy in the library",
    "jellybit upgrade {id} replace       # the old library link goes (undo: back)",
    "jellybit upgrade {id} skip          # lay nothing of this copy",
)


def line_of(data: DownloadDetail) -> str:
    """One line: what is needed or what happened, never at odds with the state (every face's verdict)."""
    return verdict_line(verdict(data.download, data.recognition, data.timeline))


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
    return [(provider_name(provider), url) for provider, url in provider_pages(item)]


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
    """What to run next for a download in this state: a line for each action the state allows (the apply
    line names the candidates it means; `upgrade`: its review asks about a better copy instead)."""
    lines: list[str] = []
    for action in actions(state):
        if action == "upgrade" and upgrade:
            lines.extend(line.format(id=download_id) for line in UPGRADE_LINES)
        elif action == "apply" and not upgrade:
            lines.append(_apply_line(download_id, candidates))
        elif action not in ("apply", "upgrade") and not (upgrade and action in ("refine", "defer")):
            lines.append(LINES.get(action, "jellybit {action} {id}").format(action=action, id=download_id))
    return lines


def _apply_line(download_id: str, candidates: Sequence[CandidatePayload]) -> str:
    if not candidates:
        return (f"jellybit apply {download_id} --type movie|series --title 'Title' --year YYYY     "
                "# lay it out as you name it (no candidate was found)")
    shown = [f"{n} = {_short(item)}" for n, item in enumerate(candidates[:MAX_NAMED], 1)]
    more = f", … {len(candidates)}" if len(candidates) > MAX_NAMED else ""
    return (f"jellybit apply {download_id} --candidate N     # lay it out as candidate N: "
            + "; ".join(shown) + more)


def review_block(data: DownloadDetail) -> list[str]:
    """The verdict, the reasons (in review), the candidates, the plan and what to run next."""
    download, recognition = data.download, data.recognition
    state = download.state
    lines = [line_of(data)]
    reasons = ordered_reasons(recognition.reasons if recognition else [])
    if state is State.REVIEW and reasons:
        lines.append("Why:")
        for reason in reasons:
            kind = "blocks" if reason.blocking else "note"
            lines.append(f"  [{kind}] {sentence(reason.message or reason.meaning or '')}")
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
    links = [link for link in data.links if is_live(link.status)]
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
        match = title_line(film.match_title, film.match_year) or "no match"
        where = f" · {film.provider} {film.provider_id}" if film.provider else ""
        sure = "sure" if film.confirmed else "needs a human"
        confidence = f", confidence {film.confidence:.2f}" if film.confidence is not None else ""
        lines.append(f"  {title_line(film.title, film.year)} → {match}{where}  [{sure}{confidence}]")
        for reason in ordered_reasons(film.reasons):
            lines.append(f"     [{'blocks' if reason.blocking else 'note'}] {sentence(reason.message)}")
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
