"""The bot's text answers: what a message added, `/list`, `/status` and `/help` (no I/O)."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from jellybit.present import service_line
from jellybit.protocol import AddResult, DownloadPayload, ListPage, State, SummaryPayload, SystemStatus
from jellybit.transports.telegram.render import TEXT_LIMIT, esc, fit, panel_url, state_words, title_of

LIST_LIMIT = 20
# The order of `/list`: what waits for you first.
LIST_ORDER = {State.REVIEW: 0, State.APPLYING: 1, State.RECOGNIZING: 2, State.DOWNLOADING: 3, State.QUEUED: 4}
_BARE_SOURCE = re.compile(r"(?:magnet:|https?://|[0-9a-fA-F]{40}$|[0-9a-fA-F]{64}$)")


def _unnamed(download: DownloadPayload) -> bool:
    """The download is still called by its source: qBittorrent has not fetched the torrent yet."""
    return not download.title and _BARE_SOURCE.match(download.name) is not None


def added_text(results: Sequence[AddResult], errors: Sequence[str], *, panel: str) -> str:
    """The answer to a message with sources: what was added or joined, and what was refused."""
    lines: list[str] = []
    for result in results:
        download = result.download
        name = esc(download.name, 200)
        link = f'<a href="{html.escape(panel_url(panel, download.id))}">panel</a>'
        if result.created:
            note = "; processed before" if result.settled_before else ""
            lines.append(f"Added: {name} ({state_words(download.state)}{note}) · {link}")
        else:
            lines.append(f"Already here: {name} ({state_words(download.state)}) · {link}")
        if _unnamed(download):
            lines.append("  the name follows once qBittorrent has fetched the torrent")
    lines.extend(f"Not added: {esc(error, 300)}" for error in errors)
    if results and results[0].download.context:
        lines.append(f"Context: {esc(results[0].download.context, 300)}")
    return fit([], lines, TEXT_LIMIT)


def list_text(page: ListPage) -> str:
    """`/list`: active downloads, review first, with progress."""
    if not page.items:
        return "Nothing is active. Send a magnet, a .torrent or a link to one."
    items = sorted(page.items, key=lambda d: LIST_ORDER.get(d.state, 9))
    lines = []
    for download in items[:LIST_LIMIT]:
        progress = f" {round(download.progress * 100)}%" if download.state is State.DOWNLOADING else ""
        lines.append(f"• {esc(title_of(download), 80)} — {state_words(download.state)}{progress}")
    if page.total > LIST_LIMIT:
        lines.append(f"… and {page.total - LIST_LIMIT} more in the panel")
    return fit([f"<b>Active: {page.total}</b>"], lines, TEXT_LIMIT)


def status_text(version: str, qbittorrent: SystemStatus, summary: SummaryPayload) -> str:
    """`/status`: qBittorrent as `info` names it (every face's words) and the counts."""
    return "\n".join([
        f"<b>Jellybit {esc(version, 40)}</b>",
        f"qBittorrent: {esc(service_line(qbittorrent), 600)}",
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
