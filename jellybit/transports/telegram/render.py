"""The bot's cards: protocol models -> Telegram HTML text and inline keyboards (no I/O).

The cards read what the MQTT answers carry (`protocol.DownloadDetail`, built by the same payload
code) and every face's words and allowed actions (`jellybit.present`): a button is on a card only
when the engine accepts its command in the download's state.

Every name, context, reason and title is untrusted text: it is cut to a bound and
HTML-escaped here, and a card is fitted to Telegram's limits (4096 characters for a text,
1024 for a photo caption) by dropping whole lines from its end, never by cutting a tag.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from jellybit.present import allowed, is_live, ordered_reasons, provider_name, state_name, title_line
from jellybit.present import verdict as verdict_of
from jellybit.protocol import (
    CandidatePayload,
    DownloadDetail,
    DownloadPayload,
    RecognitionDetail,
    State,
)
from jellybit.transports.telegram.text import Action, Press, encode_press

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
MAX_CANDIDATE_BUTTONS = 3
MAX_REASONS = 4
LIBRARY_WORDS = {"movies": "Movies", "series": "Shows"}
# The engine command each button runs (the face's actions; `Action.UNDO_KEEP` runs none).
COMMANDS: dict[Action, str] = {
    Action.APPLY: "apply", Action.CANDIDATE: "apply", Action.KEEP_BOTH: "upgrade", Action.REPLACE: "upgrade",
    Action.SKIP: "upgrade", Action.REJECT: "reject", Action.DEFER: "defer", Action.RETRY: "retry",
    Action.UNDO_ASK: "undo", Action.UNDO: "undo",
}


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


def title_of(download: DownloadPayload) -> str:
    """What to call a download: the recognized title (and year), else its torrent name."""
    return title_line(download.title, download.year) or download.name


def state_words(state: State | str) -> str:
    """A state inside a sentence ("needs review")."""
    return state_name(state).lower()


def live_links(detail: DownloadDetail) -> int:
    """How many of the download's files are in the library now."""
    return sum(1 for link in detail.links if is_live(link.status))


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


def asks_upgrade(recognition: RecognitionDetail | None) -> bool:
    """Whether the review asks the better-copy question (keep both / replace / skip)."""
    return recognition is not None and any(row.status == "held" for row in recognition.plan)


def close_candidates(recognition: RecognitionDetail, margin: float) -> list[CandidatePayload]:
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


def film_lines(recognition: RecognitionDetail) -> list[str]:
    """A movie pack film by film: what each matched, and whether it needs you."""
    lines = []
    for film in recognition.films[:MAX_REASONS * 2]:
        read = title_line(film.title, film.year)
        match = title_line(film.match_title, film.match_year) or "no match"
        lines.append(f"{'✓' if film.confirmed else '?'} {esc(read, 80)} → {esc(match, 80)}"
                     + ("" if film.confirmed else " — <b>needs you</b>"))
    return lines


def film_candidates(recognition: RecognitionDetail) -> list[CandidatePayload]:
    """A pack's buttons: the candidates of its unsure films (a press decides that film only)."""
    unsure = [f.key for f in recognition.films if not f.confirmed]
    ranked = sorted((c for c in recognition.candidates if c.id and c.film in unsure),
                    key=lambda c: (unsure.index(c.film or ""), c.distance is None, c.distance or 0.0))
    return ranked[:MAX_CANDIDATE_BUTTONS]


def candidate_label(candidate: CandidatePayload) -> str:
    """A candidate on a button: `Fargo (2014) · series · TVDB`."""
    name = " ".join(candidate.title.split())
    name = name if len(name) <= 40 else name[:39] + "…"
    kind = candidate.media_type.value if candidate.media_type else None
    return f"{title_line(name, candidate.year, kind)} · {provider_name(candidate.provider)}"


def _poster(detail: DownloadDetail) -> str | None:
    """The recognized work's poster (the payload's choice), else the first candidate's; web URLs only."""
    first = detail.recognition.candidates[:1] if detail.recognition else []
    for url in (detail.download.poster_url, *(c.poster_url for c in first)):
        if url and url.startswith(("http://", "https://")):
            return url
    return None


def action_rows(detail: DownloadDetail, margin: float) -> list[list[InlineKeyboardButton]]:
    """The buttons a download in its state allows (`jellybit.present.allowed`), review decisions first."""
    download, recognition = detail.download, detail.recognition
    state, target = download.state, download.id
    held = asks_upgrade(recognition)
    rows: list[list[InlineKeyboardButton]] = []
    if held and allowed("upgrade", state):
        # The better-copy question: what the library has is in the reasons above.
        rows.append([_button("Keep both", Press(Action.KEEP_BOTH, target)),
                     _button("Replace", Press(Action.REPLACE, target)),
                     _button("Skip", Press(Action.SKIP, target))])
    apply = not held and allowed("apply", state)
    rows.append([button for button, shown in (
        (_button("Apply", Press(Action.APPLY, target)), apply),
        (_button("Reject", Press(Action.REJECT, target)), allowed("reject", state)),
        (_button("Defer", Press(Action.DEFER, target)), allowed("defer", state))) if shown])
    if apply and recognition is not None:
        offered = film_candidates(recognition) if recognition.films else close_candidates(recognition, margin)
        rows.extend([_button(candidate_label(c), Press(Action.CANDIDATE, target, c.id))] for c in offered)
    if allowed("retry", state):
        rows.append([_button("Retry", Press(Action.RETRY, target))])
    if allowed("undo", state):
        rows.append([_button("Undo", Press(Action.UNDO_ASK, target))])
    return [row for row in rows if row]


def _one_row(detail: DownloadDetail) -> list[InlineKeyboardButton]:
    return [button for row in action_rows(detail, 0.0) for button in row]


def card(detail: DownloadDetail, *, panel: str, margin: float, url_buttons: bool = True,
         photo: bool = True) -> Card:
    """The card of a download as it is now: its state's words and the buttons the state allows."""
    state = detail.download.state
    if state is State.REVIEW:
        return review_card(detail, panel=panel, margin=margin, url_buttons=url_buttons, photo=photo)
    if state is State.DONE:
        return done_card(detail, panel=panel, url_buttons=url_buttons)
    if state is State.FAILED:
        return failed_card(detail, panel=panel, url_buttons=url_buttons)
    download = detail.download
    found = verdict_of(download, detail.recognition, detail.timeline)
    head = [f"<b>{esc(found.headline, 80)}:</b> {esc(title_of(download))}"]
    body = [esc(found.detail, 400)] if found.detail else []
    body.extend(_panel_line(panel, download.id, url_buttons))
    rows = [*action_rows(detail, margin), _panel_row(panel, download.id, url_buttons)]
    return Card(fit(head, body, TEXT_LIMIT), _keyboard(rows))


def review_card(detail: DownloadDetail, *, panel: str, margin: float, url_buttons: bool = True,
                photo: bool = True) -> Card:
    """Needs review: the title, why in words, and Apply / Reject / Defer / candidates / Open panel."""
    download, recognition = detail.download, detail.recognition
    kind = f" · {recognition.media_type.value}" if recognition and recognition.media_type else ""
    head = [f"<b>Needs review:</b> {esc(title_of(download))}{kind}"]
    if recognition is not None and recognition.title:
        head.append(f"<i>{esc(download.name)}</i>")
    body: list[str] = []
    if download.context:
        body.append(f"Context: {esc(download.context, 300)}")
    if recognition is not None:
        reasons = ordered_reasons(recognition.reasons)
        blocking = [r for r in reasons if r.blocking] or reasons
        body.extend(f"• {esc(reason.message, 220)}" for reason in blocking[:MAX_REASONS])
        body.extend(film_lines(recognition))
        if recognition.confidence is not None:
            level = recognition.recommendation.value if recognition.recommendation else "none"
            body.append(f"Confidence {round(recognition.confidence * 100)}%"
                        + (f" ({level})" if level != "none" else ""))
    else:
        body.append("• not recognized yet")
    body.append("Reply to this message with a hint to recognize it again.")
    body.extend(_panel_line(panel, download.id, url_buttons))
    rows = [*action_rows(detail, margin), _panel_row(panel, download.id, url_buttons)]
    poster = _poster(detail) if photo else None
    limit = CAPTION_LIMIT if poster else TEXT_LIMIT
    return Card(fit(head, body, limit), _keyboard(rows), poster)


def _where(recognition: RecognitionDetail | None) -> str | None:
    if recognition is None or not recognition.folder:
        return None
    libraries = {row.library for row in recognition.plan if row.library}
    library = LIBRARY_WORDS.get(next(iter(libraries)), "") if len(libraries) == 1 else ""
    return f"{library} / {recognition.folder}" if library else recognition.folder


def done_card(detail: DownloadDetail, *, panel: str, url_buttons: bool = True) -> Card:
    """Done: where it went (library and folder), how many files, a warning for copies, and whether
    Jellyfin lists it (the item's link, or what to check)."""
    download = detail.download
    jellyfin = download.jellyfin
    status = jellyfin.status if jellyfin else None
    lead = {"found": "In Jellyfin", "missing": "Done, not in Jellyfin yet",
            "unreachable": "Done, not confirmed by Jellyfin"}.get(status or "", "Done")
    head = [f"<b>{lead}:</b> {esc(title_of(download))}"]
    body: list[str] = []
    where = _where(detail.recognition)
    if where:
        body.append(f"In {esc(where, 300)}")
    if jellyfin is not None and status == "found" and jellyfin.url:
        body.append(f"Open in Jellyfin: {esc(jellyfin.url, 500)}")
    elif jellyfin is not None and status in ("missing", "unreachable") and jellyfin.note:
        body.append(f"⚠ {esc(jellyfin.note, 600)}")
    live = live_links(detail)
    if live:
        copied = sum(1 for link in detail.links if link.status == "copied")
        body.append(f"{live} file{'' if live == 1 else 's'} in the library"
                    + (f", {copied} copied (not hardlinked)" if copied else ""))
    body.extend(_panel_line(panel, download.id, url_buttons))
    rows = [[*_panel_row(panel, download.id, url_buttons), *_one_row(detail)]]
    return Card(fit(head, body, TEXT_LIMIT), _keyboard(rows))


def failed_card(detail: DownloadDetail, *, panel: str, url_buttons: bool = True) -> Card:
    """Failed: why, in words, with Retry."""
    download = detail.download
    head = [f"<b>Failed:</b> {esc(title_of(download))}"]
    error = download.error
    why = (error.message or error.code) if error else "no reason recorded"
    body = [f"Why: {esc(why, 400)}" + (f" ({esc(error.code, 40)})" if error else "")]
    body.extend(_panel_line(panel, download.id, url_buttons))
    rows = [[*_one_row(detail), *_panel_row(panel, download.id, url_buttons)]]
    return Card(fit(head, body, TEXT_LIMIT), _keyboard(rows))


def state_card(download: DownloadPayload, outcome: str, *, caption: bool) -> str:
    """A card after a button: what it is now and what the press did (no buttons left)."""
    head = [f"<b>{esc(title_of(download))}</b> — {state_words(download.state)}", esc(outcome, 300)]
    return fit(head, [], CAPTION_LIMIT if caption else TEXT_LIMIT)


def undo_confirm_card(detail: DownloadDetail) -> Card:
    """Undo asks first: it removes library links (never the download)."""
    live = live_links(detail)
    files = f"its {live} library file{'' if live == 1 else 's'}" if live else "its library files"
    target = detail.download.id
    text = (f"Undo <b>{esc(title_of(detail.download))}</b>?\n"
            f"This removes {files} (hardlinks); the download stays in qBittorrent.")
    rows = [[_button("Yes, undo", Press(Action.UNDO, target)),
             _button("Keep it", Press(Action.UNDO_KEEP, target))]]
    return Card(text, _keyboard(rows))
