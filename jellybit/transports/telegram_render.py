"""The bot's words: engine records -> Telegram HTML text and inline keyboards (no I/O).

Every name, context, reason and title is untrusted text: it is cut to a bound and
HTML-escaped here, and a card is fitted to Telegram's limits (4096 characters for a text,
1024 for a photo caption) by dropping whole lines from its end, never by cutting a tag.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from jellybit.core.models import Download
from jellybit.core.records import Candidate, Recognition
from jellybit.core.states import State
from jellybit.engine.results import AddResult, DownloadPage, Status, Summary
from jellybit.transports.telegram_text import Action, Press, encode_press

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
MAX_CANDIDATE_BUTTONS = 3
MAX_REASONS = 4
LIST_LIMIT = 20

STATE_WORDS: dict[State, str] = {
    State.QUEUED: "queued", State.DOWNLOADING: "downloading", State.RECOGNIZING: "recognizing",
    State.REVIEW: "waiting for review", State.APPLYING: "laying out", State.DONE: "done",
    State.FAILED: "failed", State.CANCELLED: "cancelled", State.REVERTED: "undone",
    State.TARGET_MISSING: "library files missing", State.ORPHANED: "torrent gone from qBittorrent",
    State.DELETED: "deleted",
}
LIBRARY_WORDS = {"movies": "Movies", "series": "Shows"}
LIVE_LINKS = ("linked", "copied", "exists")


@dataclass(frozen=True)
class Card:
    """One message: HTML text (a caption when `photo` is set) and its buttons."""

    text: str
    keyboard: InlineKeyboardMarkup | None = None
    photo: str | None = None


def esc(text: object, limit: int = 200) -> str:
    """Cut untrusted text to `limit` characters and escape it for Telegram's HTML."""
    plain = " ".join(str(text or "").split())
    if len(plain) > limit:
        plain = plain[: limit - 1].rstrip() + "…"
    return html.escape(plain)


def units(text: str) -> int:
    """Telegram's length of a text: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def fit(head: Sequence[str], body: Sequence[str], limit: int) -> str:
    """Join the lines; drop body lines from the end (with a mark) until the text fits."""
    lines = [*head, *body]
    text = "\n".join(lines)
    while units(text) > limit and len(lines) > len(head):
        lines.pop()
        text = "\n".join([*lines, "…"])
    return text


def panel_url(base: str, download_id: str) -> str:
    """The panel page of one download."""
    return f"{base.rstrip('/')}/download/{download_id}"


def title_of(download: Download, recognition: Recognition | None) -> str:
    """What to call a download: the recognized title (and year), else its torrent name."""
    if recognition is not None and recognition.title:
        year = f" ({recognition.year})" if recognition.year else ""
        return f"{recognition.title}{year}"
    return download.display_name or download.source_ref


def _button(text: str, press: Press) -> InlineKeyboardButton:
    return InlineKeyboardButton(text, callback_data=encode_press(press))


def _panel_row(base: str, download_id: str, url_buttons: bool) -> list[InlineKeyboardButton]:
    return [InlineKeyboardButton("Open panel", url=panel_url(base, download_id))] if url_buttons else []


def _panel_line(base: str, download_id: str, url_buttons: bool) -> list[str]:
    # Without a URL button (Telegram refused it) the link goes into the text instead.
    return [] if url_buttons else [f"Panel: {html.escape(panel_url(base, download_id))}"]


def _keyboard(rows: Iterable[list[InlineKeyboardButton]]) -> InlineKeyboardMarkup | None:
    kept = [row for row in rows if row]
    return InlineKeyboardMarkup(kept) if kept else None


def close_candidates(recognition: Recognition, margin: float) -> list[Candidate]:
    """The top candidates when a human has to choose between them (small margin), else none."""
    ranked = sorted((c for c in recognition.candidates if c.id),
                    key=lambda c: (c.distance is None, c.distance or 0.0))
    if len(ranked) < 2:
        return []
    small = any(r.code == "small_margin" for r in recognition.reasons)
    first, second = ranked[0].distance, ranked[1].distance
    near = first is not None and second is not None and second - first < margin
    if not (small or near or not recognition.provider_id):
        return []
    return ranked[:MAX_CANDIDATE_BUTTONS]


def film_lines(recognition: Recognition) -> list[str]:
    """A movie pack film by film: what each matched, and whether it needs you."""
    lines = []
    for film in recognition.plan.films[:MAX_REASONS * 2]:
        read = film.title + (f" ({film.year})" if film.year else "")
        match = (film.match_title or "no match") + (f" ({film.match_year})" if film.match_year else "")
        lines.append(f"{'✓' if film.confirmed else '?'} {esc(read, 80)} → {esc(match, 80)}"
                     + ("" if film.confirmed else " — <b>needs you</b>"))
    return lines


def film_candidates(recognition: Recognition) -> list[Candidate]:
    """A pack's buttons: the candidates of its unsure films (a press decides that film only)."""
    unsure = [f.key for f in recognition.plan.films if not f.confirmed]
    ranked = sorted((c for c in recognition.candidates if c.id and c.details.get("film") in unsure),
                    key=lambda c: (unsure.index(c.details["film"]), c.distance is None, c.distance or 0.0))
    return ranked[:MAX_CANDIDATE_BUTTONS]


def candidate_label(candidate: Candidate) -> str:
    """A candidate on a button: `Fargo (2014) · series · tvdb`."""
    year = f" ({candidate.year})" if candidate.year else ""
    kind = f" · {candidate.media_type.value}" if candidate.media_type else ""
    name = " ".join(candidate.title.split())
    name = name if len(name) <= 40 else name[:39] + "…"
    return f"{name}{year}{kind} · {candidate.provider}"


def _poster(recognition: Recognition | None) -> str | None:
    if recognition is None:
        return None
    chosen = [c for c in recognition.candidates if c.chosen]
    matched = [c for c in recognition.candidates
               if c.provider == recognition.provider and c.provider_id == recognition.provider_id]
    for candidate in (*chosen, *matched, *recognition.candidates[:1]):
        if candidate.poster_url and candidate.poster_url.startswith(("http://", "https://")):
            return candidate.poster_url
    return None


def review_card(download: Download, recognition: Recognition | None, *, panel: str, margin: float,
                url_buttons: bool = True, photo: bool = True) -> Card:
    """Needs review: the title, why in words, and Apply / Reject / Defer / candidates / Open panel."""
    kind = f" · {recognition.media_type.value}" if recognition and recognition.media_type else ""
    head = [f"<b>Needs review:</b> {esc(title_of(download, recognition))}{kind}"]
    if recognition is not None and recognition.title:
        head.append(f"<i>{esc(download.display_name)}</i>")
    body: list[str] = []
    if download.awaiting_files:
        body.append(f"Still downloading, {round(download.progress * 100)}%: a decision is applied when the "
                    "files arrive.")
    if download.context:
        body.append(f"Context: {esc(download.context, 300)}")
    if recognition is not None:
        reasons = sorted(recognition.reasons, key=lambda r: not r.blocking)
        blocking = [r for r in reasons if r.blocking] or reasons
        for reason in blocking[:MAX_REASONS]:
            body.append(f"• {esc(reason.message, 220)}")
        body.extend(film_lines(recognition))
        if recognition.confidence is not None:
            level = recognition.recommendation.value
            body.append(f"Confidence {round(recognition.confidence * 100)}%"
                        + (f" ({level})" if level != "none" else ""))
    else:
        body.append("• not recognized yet")
    body.append("Reply to this message with a hint to recognize it again.")
    body.extend(_panel_line(panel, download.id, url_buttons))
    rows = [[_button("Apply", Press(Action.APPLY, download.id)),
             _button("Reject", Press(Action.REJECT, download.id)),
             _button("Defer", Press(Action.DEFER, download.id))]]
    if recognition is not None and any(i.status == "held" for i in recognition.plan.items):
        # The better-copy question: what the library has is in the reasons above.
        rows = [[_button("Keep both", Press(Action.KEEP_BOTH, download.id)),
                 _button("Replace", Press(Action.REPLACE, download.id)),
                 _button("Skip", Press(Action.SKIP, download.id))],
                [_button("Reject", Press(Action.REJECT, download.id)),
                 _button("Defer", Press(Action.DEFER, download.id))]]
    elif recognition is not None and recognition.plan.films:
        rows.extend([_button(candidate_label(c), Press(Action.CANDIDATE, download.id, c.id))]
                    for c in film_candidates(recognition))
    elif recognition is not None:
        rows.extend([_button(candidate_label(c), Press(Action.CANDIDATE, download.id, c.id))]
                    for c in close_candidates(recognition, margin))
    rows.append(_panel_row(panel, download.id, url_buttons))
    poster = _poster(recognition) if photo else None
    limit = CAPTION_LIMIT if poster else TEXT_LIMIT
    return Card(fit(head, body, limit), _keyboard(rows), poster)


def _where(recognition: Recognition | None) -> str | None:
    if recognition is None or not recognition.plan.folder:
        return None
    libraries = {i.library for i in recognition.plan.items if i.library}
    library = LIBRARY_WORDS.get(next(iter(libraries)), "") if len(libraries) == 1 else ""
    return f"{library} / {recognition.plan.folder}" if library else recognition.plan.folder


def done_card(download: Download, recognition: Recognition | None, links: Sequence[object] = (), *,
              panel: str, url_buttons: bool = True) -> Card:
    """Done: where it went (library and folder), how many files, a warning for copies, and whether
    Jellyfin lists it (the item's link, or what to check)."""
    status = download.jellyfin_status
    lead = {"found": "In Jellyfin", "missing": "Done, not in Jellyfin yet",
            "unreachable": "Done, not confirmed by Jellyfin"}.get(status or "", "Done")
    head = [f"<b>{lead}:</b> {esc(title_of(download, recognition))}"]
    body: list[str] = []
    where = _where(recognition)
    if where:
        body.append(f"In {esc(where, 300)}")
    if status == "found" and download.jellyfin_url:
        body.append(f"Open in Jellyfin: {esc(download.jellyfin_url, 500)}")
    elif status in ("missing", "unreachable") and download.jellyfin_note:
        body.append(f"⚠ {esc(download.jellyfin_note, 600)}")
    live = [link for link in links if str(getattr(link, "status", "")) in LIVE_LINKS]
    if live:
        copied = sum(1 for link in live if str(getattr(link, "status", "")) == "copied")
        body.append(f"{len(live)} file{'' if len(live) == 1 else 's'} in the library"
                    + (f", {copied} copied (not hardlinked)" if copied else ""))
    body.extend(_panel_line(panel, download.id, url_buttons))
    undo = _button("Undo", Press(Action.UNDO_ASK, download.id))
    rows = [[*_panel_row(panel, download.id, url_buttons), undo]]
    return Card(fit(head, body, TEXT_LIMIT), _keyboard(rows))


def failed_card(download: Download, recognition: Recognition | None = None, *, panel: str,
                url_buttons: bool = True) -> Card:
    """Failed: why, in words, with Retry."""
    head = [f"<b>Failed:</b> {esc(title_of(download, recognition))}"]
    why = download.error_msg or download.error_code or "no reason recorded"
    body = [f"Why: {esc(why, 400)}" + (f" ({esc(download.error_code, 40)})" if download.error_code else "")]
    body.extend(_panel_line(panel, download.id, url_buttons))
    retry = _button("Retry", Press(Action.RETRY, download.id))
    rows = [[retry, *_panel_row(panel, download.id, url_buttons)]]
    return Card(fit(head, body, TEXT_LIMIT), _keyboard(rows))


def state_card(download: Download, recognition: Recognition | None, outcome: str, *, caption: bool) -> str:
    """A card after a button: what it is now and what the press did (no buttons left)."""
    head = [f"<b>{esc(title_of(download, recognition))}</b> — {STATE_WORDS[download.state]}",
            esc(outcome, 300)]
    return fit(head, [], CAPTION_LIMIT if caption else TEXT_LIMIT)


def undo_confirm_card(download: Download, recognition: Recognition | None, live_links: int) -> Card:
    """Undo asks first: it removes library links (never the download)."""
    files = "its library files"
    if live_links:
        files = f"its {live_links} library file{'' if live_links == 1 else 's'}"
    text = (f"Undo <b>{esc(title_of(download, recognition))}</b>?\n"
            f"This removes {files} (hardlinks); the download stays in qBittorrent.")
    rows = [[_button("Yes, undo", Press(Action.UNDO, download.id)),
             _button("Keep it", Press(Action.UNDO_KEEP, download.id))]]
    return Card(text, _keyboard(rows))


def added_text(results: Sequence[AddResult], errors: Sequence[str], *, panel: str) -> str:
    """The answer to a message with sources: what was added or joined, and what was refused."""
    lines: list[str] = []
    for result in results:
        download = result.download
        name = esc(download.display_name or download.source_ref, 200)
        link = f'<a href="{html.escape(panel_url(panel, download.id))}">panel</a>'
        if result.created:
            note = "; processed before" if result.settled_before else ""
            lines.append(f"Added: {name} ({STATE_WORDS[download.state]}{note}) · {link}")
        else:
            lines.append(f"Already here: {name} ({STATE_WORDS[download.state]}) · {link}")
        if not download.display_name:
            lines.append("  the name follows once qBittorrent has fetched the torrent")
    lines.extend(f"Not added: {esc(error, 300)}" for error in errors)
    if results and results[0].download.context:
        lines.append(f"Context: {esc(results[0].download.context, 300)}")
    return fit([], lines, TEXT_LIMIT)


def list_text(page: DownloadPage, titles: dict[str, str]) -> str:
    """`/list`: active downloads, review first, with progress."""
    if not page.items:
        return "Nothing is active. Send a magnet, a .torrent or a link to one."
    order = {State.REVIEW: 0, State.APPLYING: 1, State.RECOGNIZING: 2, State.DOWNLOADING: 3, State.QUEUED: 4}
    items = sorted(page.items, key=lambda d: order.get(d.state, 9))
    lines = []
    for download in items[:LIST_LIMIT]:
        progress = f" {round(download.progress * 100)}%" if download.state is State.DOWNLOADING else ""
        lines.append(f"• {esc(titles.get(download.id) or download.display_name or download.source_ref, 80)}"
                     f" — {STATE_WORDS[download.state]}{progress}")
    if page.total > LIST_LIMIT:
        lines.append(f"… and {page.total - LIST_LIMIT} more in the panel")
    return fit([f"<b>Active: {page.total}</b>"], lines, TEXT_LIMIT)


def status_text(status: Status, summary: Summary) -> str:
    """`/status`: qBittorrent and the counts."""
    qbt = status.qbittorrent
    if qbt.reachable is None:
        reach = "not polled yet"
    elif qbt.reachable:
        reach = f"reachable ({esc(qbt.version or 'version unknown', 40)}, {qbt.torrents} torrents)"
    else:
        reach = f"unreachable: {esc(qbt.error or 'no answer', 200)}"
    return "\n".join([
        f"<b>Jellybit {esc(status.version, 40)}</b>",
        f"qBittorrent: {reach}",
        f"Active: {summary.active} · downloading: {summary.downloading} · in review: {summary.in_review} "
        f"({summary.review_queue} not deferred) · failed: {summary.failed}",
    ])


HELP = (
    "<b>Jellybit</b> puts torrents into your Jellyfin library.\n"
    "Send a magnet link, a link to a .torrent, a bare infohash or a .torrent file; the rest of the "
    "message (or the caption) is the context, e.g. <i>second season, Danish version</i>. "
    "Several links in one message are several downloads. Forwarded messages work too.\n\n"
    "/list — active downloads and those waiting for you\n"
    "/review — the downloads waiting for review, with their buttons\n"
    "/status — qBittorrent and the counts\n"
    "/undo ID — remove a download's library files (asks first)\n"
    "/help — this text\n\n"
    "Reply to a review message with a hint (“it is the 2014 series”) to recognize it again."
)
