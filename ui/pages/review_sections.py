"""The decision on the download page: the verdict with its reasons, one card per candidate work, and the
per-file table whose corrections go into Apply."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nicegui import ui

from jellybit.present import pages, provider_name
from jellybit.protocol import (
    MAX_SEASON,
    CandidatePayload,
    EvidencePayload,
    MediaType,
    PlanItemPayload,
    ReasonPayload,
    RecognitionDetail,
    Role,
    State,
)
from ui import format as fmt
from ui import review
from ui.frame import WRAP
from ui.pages.detail_sections import section

TONES = {"decide": ("help", "orange-10", "bg-orange-1 text-black"),
         "done": ("check_circle", "positive", ""),
         "working": ("hourglass_top", "primary", ""),
         "problem": ("error", "negative", ""),
         "stopped": ("block", "grey-7", "")}
EVIDENCE = {"match": ("check", "positive", "agrees"), "mismatch": ("close", "negative", "disagrees"),
            "info": ("info", "grey-7", "note")}
MAX_ROWS = 400          # files shown in the table; a bigger pack is corrected over the CLI or MQTT


def decision(verdict: review.Verdict, rec: RecognitionDetail | None, state: State | None) -> None:
    """The verdict first, then the reasons in words (blocking ones first), then the match score."""
    icon, colour, _ = TONES.get(verdict.tone, TONES["stopped"])
    reasons = review.ordered_reasons(rec.reasons if rec else [])
    with ui.card().classes("w-full gap-2 p-4").props(f"flat bordered data-section=Decision "
                                                     f"data-verdict={verdict.tone}"):
        with ui.row().classes("items-center gap-2 no-wrap"):
            ui.icon(icon, color=colour, size="md").props("aria-hidden=true")
            ui.label(verdict.headline).classes("text-h6").props("data-testid=verdict")
        if verdict.detail:
            ui.label(verdict.detail).classes("text-body1").style(WRAP)
        if not reasons:
            return
        if state is not State.REVIEW:
            # Once decided, the doubts of the recognition are history: folded away, not a verdict.
            with ui.expansion(f"What the recognition noted ({len(reasons)})", icon="notes").classes(
                    "w-full").props("dense"):
                _reasons(reasons, decided=True)
        else:
            _reasons(reasons, decided=False, said=verdict.detail)
        confidence = rec.confidence if rec else None
        if confidence is not None:
            ui.label(f"Match score {fmt.percent(confidence)}: how well the best candidate fits the names; "
                     "the reasons above decide.").classes("text-xs text-muted").style(WRAP)


def _reasons(reasons: list[ReasonPayload], *, decided: bool, said: str = "") -> None:
    with ui.column().classes("gap-2 w-full").props("role=list"):
        for reason in reasons:
            blocking = reason.blocking and not decided
            words, meaning = review.reason_words(reason)
            meaning = "" if meaning and said.startswith(meaning) else meaning   # the verdict said it
            with ui.row().classes("items-start gap-2 no-wrap w-full").props(
                    f"role=listitem data-reason={reason.code}"):
                ui.badge("Blocks" if blocking else "Note",
                         color="negative" if blocking else "grey-8").classes("mt-1 shrink-0")
                with ui.column().classes("gap-0").style("min-width:0"):
                    ui.label(words).classes("text-sm").style(WRAP)
                    if meaning:
                        ui.label(meaning).classes("text-xs text-muted").style(WRAP)


def work_line(item: CandidatePayload) -> str:
    """`2011–2021 · US · Showtime · 11 seasons · 134 episodes`: what tells a work from another of its name."""
    first, last = item.first_year or item.year, item.last_year
    years = f"{first}–{last}" if first and last and last != first else str(first or "")
    seasons, episodes = item.season_count, item.episode_count
    parts = [years, item.country or "", item.network or "",
             fmt.count(seasons, "season") if seasons else "",
             fmt.count(episodes, "episode") if episodes else ""]
    return " · ".join(str(p) for p in parts if p)


def candidates(items: list[CandidatePayload], selected: str | None, recommended: str | None,
               choose: Callable[[CandidatePayload], None], apply: Callable[[ui.button], Any], *,
               can_choose: bool) -> None:
    """One card per candidate work; the selected one carries Apply."""
    with section("Which is it?" if can_choose else "Candidates"):
        if not items:
            ui.label("The metadata providers offered no candidates: correct the title or year below, or add "
                     "a hint.").classes("text-sm text-muted")
            return
        for item in items:
            candidate_card(item, review.candidate_key(item), selected, recommended, choose, apply,
                       can_choose=can_choose)


def candidate_card(item: CandidatePayload, key: str, selected: str | None, recommended: str | None,
                   choose: Callable[[CandidatePayload], None], apply: Callable[[ui.button], Any], *,
                   can_choose: bool) -> None:
    """One candidate work: poster, what tells it apart, evidence, links, Choose (and Apply once chosen)."""
    picked = key == selected
    name = fmt.title_line(item.title, item.first_year or item.year)
    card = ui.card().classes("w-full gap-2 p-3").props(f"flat bordered data-candidate='{key}'")
    if picked:
        card.classes("ring-2 ring-primary")
    with card, ui.row().classes("w-full gap-3 no-wrap items-start"):
        _poster(item.poster_url, name, "w-16 sm:w-24")
        with ui.column().classes("gap-1 grow").style("min-width:0"):
            with ui.row().classes("items-center gap-2"):
                ui.label(name).classes("text-subtitle1 font-medium").style(WRAP)
                if item.id and item.id == recommended:
                    ui.badge("Recommended", color="indigo-8").props("data-testid=recommended")
            original = item.original_title
            kind = {MediaType.MOVIE: "film", MediaType.SERIES: "series"}.get(item.media_type, "") \
                if item.media_type else ""
            second = " · ".join(p for p in (original if original and original != item.title else "",
                                             kind) if p)
            if second:
                ui.label(second).classes("text-sm text-muted").style(WRAP)
            described = work_line(item)
            if described:
                ui.label(described).classes("text-sm").style(WRAP).mark(f"work-{key}")
            if item.overview:
                _overview(item.overview, key)
            _evidence(item.evidence, key)
            _links(item)
            with ui.row().classes("gap-2 items-center"):
                button = ui.button("Chosen" if picked else "Choose", icon="check" if picked else None,
                                   on_click=lambda _e, it=item: choose(it)).props(
                    f"{'unelevated color=indigo-8' if picked else 'outline'} dense no-caps "
                    f"aria-label='Choose {_attr(name)}' aria-pressed={'true' if picked else 'false'}"
                ).mark(f"choose-{key}")
                button.set_enabled(can_choose)
                if picked and can_choose:
                    ui.button(f"Apply: {name}", icon="done_all", on_click=lambda e: apply(e.sender)).props(
                        "unelevated color=positive no-caps").mark("apply-candidate")


def _poster(url: str | None, name: str, width: str) -> None:
    if url:
        ui.image(url).classes(f"{width} shrink-0 rounded").style("aspect-ratio:2/3").props(
            f"alt='Poster of {_attr(name)}' fit=cover no-transition")
    else:
        with ui.element("div").classes(f"{width} shrink-0 rounded bg-grey-5 flex items-center "
                                       "justify-center").style("aspect-ratio:2/3"):
            ui.icon("movie", size="md", color="grey-9").props("aria-label='No poster'")


def _overview(text: str, key: str) -> None:
    label = ui.label(text).classes("text-sm clamp-3").style(WRAP).mark(f"overview-{key}")
    state = {"open": False}

    def toggle() -> None:
        state["open"] = not state["open"]
        label.classes(remove="clamp-3") if state["open"] else label.classes(add="clamp-3")
        more.set_text("Less" if state["open"] else "More")

    if len(text) > 160:
        more = ui.button("More", on_click=toggle).props("flat dense no-caps size=sm").classes("self-start")


def _evidence(items: list[EvidencePayload], key: str) -> None:
    if not items:
        return
    with ui.column().classes("gap-0").props(f"role=list aria-label='Evidence' data-evidence='{key}'"):
        for item in items:
            icon, colour, word = EVIDENCE.get(item.verdict, EVIDENCE["info"])
            text = item.text
            if item.source:
                text += f" (from {item.source})"
            with ui.row().classes("items-center gap-1 no-wrap").props(
                    f"role=listitem data-verdict={item.verdict}"):
                ui.icon(icon, color=colour, size="xs").props(f"aria-label={word}")
                ui.label(text).classes("text-sm").style(WRAP)


def _links(item: CandidatePayload) -> None:
    links = dict(pages(item))
    if not links:
        return
    with ui.row().classes("gap-x-3 gap-y-0 items-center"):
        for provider, url in links.items():
            text = provider_name(provider)
            ui.link(text, url, new_tab=True).classes("text-sm link").props(
                f"aria-label='Open it on {text} in a new tab' rel=noopener")


def _attr(text: str) -> str:
    return text.replace("'", "’").replace('"', "”")


UPGRADE_BUTTONS = (("keep_both", "Keep both", "library_add", "a Jellyfin version beside it"),
                   ("replace", "Replace", "swap_horiz", "the old library link goes; Undo brings it back; "
                    "its download is never touched"),
                   ("skip", "Skip", "do_not_disturb_on", "lay nothing of this copy"))


def upgrade_choice(rows: list[PlanItemPayload], choose: Callable[[str, Any], Any]) -> None:
    """The better-copy question: what the library has, and Keep both / Replace / Skip."""
    held = [row for row in rows if row.status == "held" and row.role == "video"]
    if not held:
        return
    with section("Already in your library") as card:
        card.props("data-section=Upgrade")
        for row in held:
            ui.label(f"{row.source}: {row.note}").classes("text-body2").style(WRAP).props(
                "data-testid=upgrade-message")
        with ui.row().classes("w-full gap-2 flex-wrap"):
            for choice, text, icon, tip in UPGRADE_BUTTONS:
                button = ui.button(text, icon=icon).props("outline no-caps").mark(f"upgrade-{choice}")
                button.on_click(lambda e, c=choice: choose(c, e.sender))
                button.tooltip(tip)


def file_table(rows: list[PlanItemPayload], edits: dict[str, dict[str, Any]], folder: str | None, *,
               editable: bool) -> None:
    """Every file: source → target, role, season/episodes, language; editable while in review."""
    with section("Files"):
        if folder:
            ui.label(f"Folder: {folder}").classes("text-sm").style(WRAP)
        if not rows:
            ui.label("No plan yet.").classes("text-sm text-muted")
            return
        if editable:
            ui.label("Correct a file's role, season, episodes or language here; Apply pins what you "
                     "changed.").classes("text-xs text-muted")
        with ui.column().classes("w-full gap-0").props("role=table aria-label='Files: source to target'"):
            for row in rows[:MAX_ROWS]:
                _file_row(row, edits, editable=editable)
        if len(rows) > MAX_ROWS:
            ui.label(f"…and {len(rows) - MAX_ROWS} more files (see `jellybit show`).").classes("text-sm")


def _file_row(row: PlanItemPayload, edits: dict[str, dict[str, Any]], *, editable: bool) -> None:
    source = row.source
    with ui.column().classes("w-full gap-1 py-2 border-b").props(
            f"role=row data-file='{_attr(source)}'").style("border-color:rgba(128,128,128,.3)"):
        with ui.column().classes("gap-0 w-full").style("min-width:0").props("role=cell"):
            ui.label(source).classes("text-sm font-mono").style(WRAP)
            target = row.target
            library = f"{row.library}/" if row.library else ""
            ui.label(f"→ {library}{target}" if target else "→ not laid out").classes(
                "text-sm font-mono text-muted").style(WRAP)
        with ui.row().classes("gap-2 items-center").props("role=cell"):
            if editable:
                _file_editors(row, edits.setdefault(source, {}))
            else:
                ui.badge(fmt.ROLES.get(row.role, row.role), color="blue-grey-8")
                code = fmt.episode_code(row.season, row.episodes)
                if code:
                    ui.badge(code, color="indigo-8")
                if row.language:
                    ui.badge(row.language, color="grey-8")
            mark = fmt.MARKS.get(row.status or "")
            if mark and row.status in ("collision", "skipped", "copied"):
                ui.badge(mark[0], color=mark[1]).props(f"data-mark={row.status}")
            if row.size:
                ui.label(fmt.size(row.size)).classes("text-xs text-muted")
        if row.note:
            ui.label(row.note).classes("text-xs text-muted w-full").style(WRAP)


def _file_editors(row: PlanItemPayload, edit: dict[str, Any]) -> None:
    source = row.source
    name = source.rsplit("/", 1)[-1]
    mark = ui.badge("", color="indigo-8").props(f"data-edited='{_attr(source)}'")

    def changed(key: str, value: Any) -> None:
        # The row says at once whether Apply will pin something for it, or what is wrong with it.
        edit[key] = value
        verdict = review.file_overrides([row], {source: edit})
        problem = isinstance(verdict, str)
        mark.set_text("Not valid" if problem else "Changed")
        mark.props(f"color={'negative' if problem else 'indigo-8'}")
        mark.set_visibility(problem or bool(verdict))

    # Rebuilt with an edit already made (a live update re-rendered the table): say so again.
    changed_now = review.file_overrides([row], {source: edit})
    if changed_now:
        mark.set_text("Not valid" if isinstance(changed_now, str) else "Changed")
        mark.props(f"color={'negative' if isinstance(changed_now, str) else 'indigo-8'}")
    mark.set_visibility(bool(changed_now))
    role = ui.select({r.value: fmt.ROLES[r] for r in review.ROLES}, value=str(edit.get("role", row.role)),
                     label="Role").props(
        f"outlined dense options-dense aria-label='Role of {_attr(name)}'").classes("w-32").mark("file-role")
    role.on_value_change(lambda e: changed("role", e.value))
    if row.role in (Role.VIDEO, Role.SUBTITLE, Role.AUDIO) or edit.get("role") == Role.VIDEO:
        season = ui.number("Season", value=edit.get("season", row.season), min=0, max=MAX_SEASON,
                           precision=0).props(f"outlined dense aria-label='Season of {_attr(name)}'").classes(
            "w-24").mark("file-season")
        season.on_value_change(lambda e: changed("season", e.value))
        shown = edit.get("episodes", fmt.episodes_text(row.episodes))
        episodes = ui.input("Episodes", value=shown).props(
            f"outlined dense aria-label='Episodes of {_attr(name)}'").classes("w-28").mark("file-episodes")
        episodes.on_value_change(lambda e: changed("episodes", e.value))
    if row.role in review.TRACKS:
        language = ui.input("Language", value=edit.get("language", row.language or ""),
                            placeholder="en").props(
            f"outlined dense maxlength=12 aria-label='Language of {_attr(name)}'").classes("w-24").mark(
            "file-language")
        language.on_value_change(lambda e: changed("language", e.value))
    mark.move(target_index=-1)
