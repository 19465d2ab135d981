"""The read-only parts of the download page: recognition, candidates, plan, links, timeline."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from nicegui import ui

from ui import format as fmt
from ui.cards import state_badge
from ui.frame import WRAP

RECOMMENDATIONS = {
    "strong": "Strong match: the recognition is sure of the title.",
    "medium": "Medium match: the best candidate is probably right.",
    "low": "Weak match: check the candidates.",
    "none": "No usable match.",
}
LIVE_LINKS = ("linked", "copied", "exists")


def section(title: str) -> ui.card:
    """A titled card."""
    card = ui.card().classes("w-full gap-2 p-4").props(f"flat bordered data-section='{title}'")
    with card:
        ui.label(title).classes("text-h6")
    return card


def provider_link(provider: str | None, provider_id: str | None, url: str | None = None,
                  media_type: str | None = None) -> None:
    """'TMDB 603' as a link to the provider's page."""
    if not provider:
        return
    text = f"{fmt.provider_name(provider)} {provider_id or ''}".strip()
    target = url or _provider_url(provider, provider_id, media_type)
    if target:
        ui.link(text, target, new_tab=True).classes("text-sm").props(
            f"aria-label='Open {text} in a new tab' rel=noopener")
    else:
        ui.label(text).classes("text-sm")


def _provider_url(provider: str, provider_id: str | None, media_type: str | None) -> str | None:
    if not provider_id:
        return None
    return {
        "tmdb": f"https://www.themoviedb.org/{'tv' if media_type == 'series' else 'movie'}/{provider_id}",
        "tvdb": f"https://thetvdb.com/dereferrer/series/{provider_id}",
        "imdb": f"https://www.imdb.com/title/{provider_id}/",
        "tvmaze": f"https://www.tvmaze.com/shows/{provider_id}",
    }.get(provider)


def recognition(rec: dict[str, Any]) -> None:
    """Type, title, year, provider, confidence, recommendation and every reason in words."""
    with section("Recognition"):
        ui.label(fmt.title_line(rec.get("title"), rec.get("year"), rec.get("media_type"))
                 or "Not recognized yet").classes("text-subtitle1 font-medium").style(WRAP)
        chosen = next((c for c in rec.get("candidates") or [] if c.get("provider") == rec.get("provider")
                       and c.get("provider_id") == rec.get("provider_id")), {})
        provider_link(rec.get("provider"), rec.get("provider_id"), chosen.get("url"), rec.get("media_type"))
        confidence = rec.get("confidence")
        if confidence is not None:
            with ui.row().classes("w-full items-center gap-2 no-wrap"):
                ui.label("Confidence").classes("text-sm")
                colour = "positive" if confidence >= 0.8 else "warning" if confidence >= 0.5 else "negative"
                ui.linear_progress(value=round(confidence, 3), show_value=False, size="10px",
                                   color=colour).props(
                    f"rounded aria-label=Confidence aria-valuenow={round(confidence * 100)}").classes("grow")
                ui.label(fmt.percent(confidence)).classes("text-sm font-medium whitespace-nowrap")
        recommendation = rec.get("recommendation")
        reasons = rec.get("reasons") or []
        if recommendation:
            text = RECOMMENDATIONS.get(recommendation, recommendation)
            if any(r.get("blocking") for r in reasons):
                text += " Something below still needs a human decision."
            ui.label(text).classes("text-sm")
        if reasons:
            ui.label("Why it needs a look:").classes("text-sm font-medium")
            with ui.column().classes("gap-1 w-full").props("role=list"):
                for reason in reasons:
                    with ui.row().classes("items-start gap-2 no-wrap").props("role=listitem"):
                        blocking = bool(reason.get("blocking"))
                        ui.icon("block" if blocking else "info", color="negative" if blocking else "grey",
                                size="xs").props(f"aria-label={'Blocking' if blocking else 'Note'}")
                        words = reason.get("message") or reason.get("code", "").replace("_", " ")
                        suffix = " (blocks automatic layout)" if blocking else ""
                        ui.label(words + suffix).classes("text-sm").style(WRAP)
        elif recommendation and recommendation != "strong":
            ui.label("No specific reason was given.").classes("text-sm opacity-70")


def candidates(items: list[dict[str, Any]], selected: str | None,
               choose: Callable[[dict[str, Any]], None], *, can_choose: bool) -> None:
    """Candidate cards with poster, year, provider link and a Choose button."""
    with section("Candidates"):
        if not items:
            ui.label("The metadata providers offered no candidates.").classes("text-sm opacity-70")
            return
        with ui.row().classes("w-full gap-3 items-stretch"):
            for item in items:
                key = candidate_key(item)
                picked = key == selected
                card = ui.card().classes("gap-1 p-2 w-36").props(
                    f"flat bordered data-candidate='{key}'")
                if picked:
                    card.classes("ring-2 ring-primary")
                with card:
                    name = fmt.title_line(item.get("title"), item.get("year"))
                    if item.get("poster_url"):
                        ui.image(item["poster_url"]).classes("w-full rounded").style(
                            "aspect-ratio:2/3").props(
                            f"alt='Poster of {_attr(name)}' fit=cover no-transition")
                    else:
                        with ui.element("div").classes(
                                "w-full rounded bg-grey-4 flex items-center justify-center").style(
                                "aspect-ratio:2/3"):
                            ui.icon("movie", size="lg", color="grey-7").props("aria-label='No poster'")
                    ui.label(name).classes("text-sm font-medium").style(WRAP)
                    meta = [item.get("media_type") or ""]
                    if item.get("distance") is not None:
                        meta.append(f"match {round((1 - item['distance']) * 100)} %")
                    ui.label(" · ".join(m for m in meta if m)).classes("text-xs opacity-70")
                    described = work_line(item)
                    if described:
                        ui.label(described).classes("text-xs").style(WRAP).mark(f"work-{key}")
                    provider_link(item.get("provider"), item.get("provider_id"), item.get("url"),
                                  item.get("media_type"))
                    button = ui.button("Chosen" if picked else "Choose", icon="check" if picked else None,
                                       on_click=lambda _e, it=item: choose(it)).props(
                        f"{'unelevated' if picked else 'outline'} dense aria-label='Choose {_attr(name)}'"
                        f" aria-pressed={'true' if picked else 'false'}").classes("w-full").mark(
                        f"choose-{key}")
                    button.set_enabled(can_choose)


def work_line(item: dict[str, Any]) -> str:
    """`2011–2021 · US · Showtime · 11 seasons`: what tells a work from another of its name."""
    first, last = item.get("first_year"), item.get("last_year")
    years = f"{first}–{last}" if first and last and last != first else str(first or "")
    seasons = item.get("season_count")
    parts = [years, item.get("country") or "", item.get("network") or "",
             f"{seasons} season{'s' if seasons != 1 else ''}" if seasons else ""]
    return " · ".join(str(p) for p in parts if p)


def candidate_key(item: dict[str, Any]) -> str:
    """A stable key for a candidate: its id, else provider:provider_id."""
    return str(item.get("id") or f"{item.get('provider')}:{item.get('provider_id')}")


def _attr(text: str) -> str:
    return text.replace("'", "’").replace('"', "”")


def plan(rows: list[dict[str, Any]], folder: str | None) -> None:
    """The plan as source → target rows with role, season/episodes and marks."""
    with section("Plan"):
        if folder:
            ui.label(f"Folder: {folder}").classes("text-sm").style(WRAP)
        if not rows:
            ui.label("No plan yet.").classes("text-sm opacity-70")
            return
        with ui.column().classes("w-full gap-0").props("role=table aria-label='Plan: source to target'"):
            for row in rows:
                with ui.row().classes("w-full items-start gap-x-3 gap-y-1 py-2 border-b").props(
                        "role=row").style("border-color:rgba(128,128,128,.25)"):
                    with ui.column().classes("gap-0 grow basis-64").style("min-width:0").props("role=cell"):
                        ui.label(row.get("source", "")).classes("text-sm font-mono").style(WRAP)
                        target = row.get("target")
                        arrow = f"→ {row.get('library') + '/' if row.get('library') else ''}{target}" \
                            if target else "→ not laid out"
                        ui.label(arrow).classes("text-sm font-mono opacity-80").style(WRAP)
                    with ui.row().classes("gap-1 items-center").props("role=cell"):
                        ui.badge(fmt.ROLES.get(row.get("role", ""), row.get("role", "")), color="blue-grey-6")
                        code = fmt.episode_code(row.get("season"), row.get("episodes") or [])
                        if code:
                            ui.badge(code, color="indigo-5")
                        mark = fmt.MARKS.get(row.get("status") or "")
                        if mark and row.get("status") in ("collision", "skipped", "copied"):
                            ui.badge(mark[0], color=mark[1]).props(f"data-mark={row.get('status')}")
                        if row.get("size"):
                            ui.label(fmt.size(row.get("size"))).classes("text-xs opacity-60")
                    if row.get("note"):
                        ui.label(row["note"]).classes("text-xs opacity-70 w-full").style(WRAP)


def links(rows: list[dict[str, Any]]) -> None:
    """The library files this download laid (what undo removes)."""
    with section("Library files"):
        if not rows:
            ui.label("Nothing was laid out.").classes("text-sm opacity-70")
            return
        for row in rows:
            with ui.row().classes("w-full items-start gap-2 no-wrap py-1"):
                mark = fmt.MARKS.get(row.get("status") or "", (row.get("status") or "", "grey"))
                ui.badge(mark[0], color=mark[1])
                with ui.column().classes("gap-0").style("min-width:0"):
                    ui.label(row.get("target") or "").classes("text-sm font-mono").style(WRAP)
                    if row.get("message"):
                        ui.label(row["message"]).classes("text-xs text-amber-9").style(WRAP)


def live_link_targets(rows: list[dict[str, Any]]) -> list[str]:
    """The targets that are still in the library (undo would remove these)."""
    return [r.get("target") or "" for r in rows if r.get("status") in LIVE_LINKS]


def timeline(rows: list[dict[str, Any]]) -> None:
    """State transitions, newest first."""
    with section("Timeline"):
        if not rows:
            ui.label("No history yet.").classes("text-sm opacity-70")
            return
        with ui.timeline(side="right").classes("w-full"):
            for row in reversed(rows):
                to = row.get("to") or ""
                came = f"{fmt.state_label(row['from'])} → " if row.get("from") else ""
                ui.timeline_entry(row.get("reason") or "", title=f"{came}{fmt.state_label(to)}",
                                  subtitle=f"{fmt.stamp(row.get('at'))} · by {row.get('actor') or 'worker'}",
                                  color=fmt.state_color(to))


def details(data: dict[str, Any]) -> None:
    """The raw answer, for the curious, folded away."""
    with ui.expansion("Details (raw data)", icon="data_object").classes("w-full").props(
            "dense aria-label='Details (raw data)'"):
        ui.code(json.dumps(data, indent=2, ensure_ascii=False), language="json").classes("w-full text-xs")


def header(download: dict[str, Any]) -> None:
    """Name, state, title, provider and context."""
    with ui.row().classes("w-full items-start justify-between no-wrap gap-2"):
        ui.label(download.get("name") or download.get("id", "")).classes("text-h6").style(WRAP)
        state_badge(download.get("state", ""))
    line = fmt.title_line(download.get("title"), download.get("year"), download.get("media_type"))
    if line:
        ui.label(line).classes("text-subtitle1").style(WRAP)
    provider_link(download.get("provider"), download.get("provider_id"), None, download.get("media_type"))
    if download.get("context"):
        ui.label(f"Context: {download['context']}").classes("text-sm italic").style(WRAP)
    if download.get("target_folder"):
        ui.label(f"Folder: {download['target_folder']}").classes("text-sm opacity-80").style(WRAP)
    error = download.get("error")
    if error:
        ui.label(f"Failed: {error.get('message') or error.get('code')}").classes(
            "text-negative text-sm").style(WRAP)
    for warning in download.get("warnings") or []:
        ui.label(warning).classes("text-amber-9 text-sm").style(WRAP)
    if download.get("defer_until"):
        ui.label(f"Deferred until {fmt.stamp(download['defer_until'])}").classes("text-sm")
    ui.label(f"Added {fmt.stamp(download.get('created_at'))} · id {download.get('id')}").classes(
        "text-xs opacity-60").style(WRAP)
