"""The download page `/download/{id}`: everything about one download and every action on it."""

from __future__ import annotations

import re
from typing import Any

from nicegui import ui

from jellybit.protocol import (
    MAX_HINT_CHARS,
    CandidatePayload,
    Command,
    DownloadDetail,
    DownloadPayload,
    FilmPayload,
    MediaType,
    PlanItemPayload,
    RecognitionDetail,
    State,
)
from ui import format as fmt
from ui import review
from ui.actions import DESTRUCTIVE, PRIMARY, allowed, bar_actions, call, notify, offered, show_error
from ui.cards import progress_line
from ui.frame import WRAP, frame, not_found
from ui.live import Live, RequestFailed
from ui.pages import detail_sections as sections
from ui.pages import film_sections, review_sections
from ui.pages.detail_dialogs import Confirmations

ULID = re.compile(r"^[0-9a-hjkmnp-tv-z]{26}$")
ADDED = {
    "new": "Added: a new download was created.",
    "joined": "This torrent was already being handled: your request joined this download.",
}


def valid_id(value: str) -> bool:
    """Tell whether a path segment looks like a download id (a lowercase ULID)."""
    return bool(ULID.match(value))


class DetailView:
    """One open download page: the `get` answer, the human's choices, and the actions."""

    def __init__(self, live: Live, download_id: str) -> None:
        self.live = live
        self.id = download_id
        self.data: DownloadDetail | None = None
        self.error: str | None = None
        self.missing = False
        self.form: dict[str, Any] = {"media_type": None, "title": "", "year": None, "season": None,
                                     "hint": ""}
        self.selected: str | None = None
        self.film_choices: dict[str, str] = {}           # a movie pack: film key -> candidate key
        self.file_edits: dict[str, dict[str, Any]] = {}   # source -> the table's corrections
        self.outside: ui.element | None = None   # dialogs live here, outside the refreshed body
        self._seen: tuple[Any, ...] | None = None
        self._body_state: State | None = None    # the state the body was last rendered for
        self.confirm = Confirmations(live, download_id, host=self._dialog_host, after=self._after,
                                     links=lambda: self.data.links if self.data else [])
        self._shown: dict[str, tuple[Any, ...]] = {}   # what the corrections and the rest were built from

    # ------------------------------------------------------------ data

    @property
    def download(self) -> DownloadPayload | None:
        """The freshest download payload: the live retained one, else the one from `get`."""
        live = self.live.downloads.get(self.id)
        if live is not None:
            return live
        return self.data.download if self.data is not None else None

    @property
    def state(self) -> State | None:
        """The download's current state (None while unknown)."""
        return self.download.state if self.download is not None else None

    @property
    def recognition(self) -> RecognitionDetail | None:
        """The current recognition from the last `get`."""
        return self.data.recognition if self.data is not None else None

    def plan(self) -> list[PlanItemPayload]:
        """The current recognition's plan rows ([] before one)."""
        return self.recognition.plan if self.recognition is not None else []

    async def fetch(self, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Ask the worker for the full detail."""
        try:
            self.data = await self.live.request(Command.GET, {"id": self.id}, timeout=timeout)
            self.error = None
            self.missing = False
        except RequestFailed as exc:
            self.missing = exc.code == "not_found"
            self.error = exc.message
            return
        recognition = self.recognition
        candidates = recognition.candidates if recognition else []
        chosen = next((c for c in candidates if c.chosen), None)
        keys = {review.candidate_key(c) for c in candidates}
        # A new recognition has new candidates: the old pick no longer exists (the recommended one is
        # preselected); outside review the worker's choice is the one to show.
        if self.state is not State.REVIEW:
            self.selected = review.candidate_key(chosen) if chosen is not None else None
        elif self.selected not in keys:
            self.selected = review.preselected(recognition)
        picks = film_sections.preselected(recognition)
        films = {f.key for f in recognition.films} if recognition else set()
        self.film_choices = {k: v for k, v in {**picks, **self.film_choices}.items()
                             if k in films and v in keys} if self.state is State.REVIEW else picks
        sources = {row.source for row in self.plan()}
        self.file_edits = {k: v for k, v in self.file_edits.items() if k in sources}
        self._seen = self._fingerprint()

    def _fingerprint(self) -> tuple[Any, ...]:
        d = self.download
        review = self.live.reviews.get(self.id)
        if d is None:
            return (None, review.requested_at if review else None, len(review.hints) if review else 0)
        return (d.state, d.settled_at, d.title, d.target_folder, d.defer_until,
                review.requested_at if review else None, len(review.hints) if review else 0)

    def stale(self) -> bool:
        """Tell whether the live state moved on since the last `get` (a refetch is due)."""
        return self.data is not None and self._seen != self._fingerprint()

    # ------------------------------------------------------------ the human's choices

    def choose(self, candidate: CandidatePayload) -> None:
        """Select a candidate for apply."""
        self.selected = review.candidate_key(candidate)
        notify(f"Chosen: {fmt.title_line(candidate.title, candidate.year)}. "
               "Press Apply to lay it out.")
        self.refresh()

    def choose_film(self, film: FilmPayload, candidate: CandidatePayload) -> None:
        """Decide one film of a movie pack (the others keep their choice)."""
        self.film_choices[film.key] = review.candidate_key(candidate)
        notify(f"{film.title}: {fmt.title_line(candidate.title, candidate.year)}. "
               "Press Apply once every film is decided.")
        self.refresh()

    def selected_candidate(self) -> CandidatePayload | None:
        """The candidate the human picked (or the worker's choice)."""
        recognition = self.recognition
        return next((c for c in (recognition.candidates if recognition else [])
                     if review.candidate_key(c) == self.selected), None)

    def apply_payload(self) -> dict[str, Any] | str:
        """The `apply` request from the chosen candidate, the fields and the file table; or what is wrong."""
        payload: dict[str, Any] = {"id": self.id}
        files = review.file_overrides(self.plan(), self.file_edits)
        if isinstance(files, str):
            return files
        overrides: dict[str, Any] = {}
        candidate = self.selected_candidate()
        if self.recognition is not None and self.recognition.films:
            # a movie pack: each decided film is pinned on its own files, no one candidate for the pack
            pinned = film_sections.pins(self.recognition, self.film_choices)
            files = {s: {**pinned.get(s, {}), **files.get(s, {})} for s in {*pinned, *files}}
            candidate = None
        if candidate is not None:
            if candidate.id:
                payload["candidate_id"] = candidate.id
            else:
                overrides.update(provider=str(candidate.provider), provider_id=candidate.provider_id)
        form = self.form
        if form["media_type"] in tuple(MediaType):
            overrides["media_type"] = form["media_type"]
        if (form["title"] or "").strip():
            overrides["title"] = form["title"].strip()
        for key in ("year", "season"):
            if form[key] not in (None, ""):
                overrides[key] = int(form[key])
        if files:
            overrides["files"] = files
        if overrides:
            payload["overrides"] = overrides
        return payload

    # ------------------------------------------------------------ rendering

    def render(self) -> None:
        """Build the page once: the header and the body refresh, the action buttons stay.

        The buttons are never rebuilt: a click that reaches the server just after a live update
        would otherwise land on an element that no longer exists and be dropped, and a button's
        spinner would vanish mid-request. Their enabled state follows the download's state.
        """
        self._header()
        self._actions()
        self._body()
        self._corrections()
        self._rest()
        self._update_actions()

    def refresh(self) -> None:
        """Re-render what the current data shows."""
        self._header.refresh()
        self._refresh_body()
        self._update_actions()

    def _refresh_body(self) -> None:
        # The parts with inputs (the corrections and the file table; the hint) are rebuilt only when
        # what they show changed: a rebuild after Choose or a refetch would replace an input the user
        # is typing in, and a value sent to the replaced input is lost.
        self._body.refresh()
        if self._keys()["corrections"] != self._shown.get("corrections"):
            self._corrections.refresh()
        if self._keys()["rest"] != self._shown.get("rest"):
            self._rest.refresh()

    def _keys(self) -> dict[str, tuple[Any, ...]]:
        recognition, shown = self.recognition, self.download is not None
        plan = (recognition.folder, tuple(recognition.plan)) if recognition is not None else None
        return {"corrections": (shown, allowed("apply", self.state), plan),
                "rest": (shown, self.state, self.data)}

    def refresh_live(self) -> None:
        """A retained update (progress, speed): the header follows; the body only on a new state.

        The body shows the `get` answer, which a live update does not change; leaving it alone
        keeps a candidate or a field the user is about to click in place.
        """
        self._header.refresh()
        if self.state != self._body_state:
            self._refresh_body()
        self._update_actions()

    @ui.refreshable_method
    def _header(self) -> None:
        download = self.download
        if download is None:
            with sections.section("Not available"):
                ui.label(self.error or "The worker has not answered yet.").classes("text-sm").style(WRAP)
                ui.button("Try again", icon="refresh", on_click=self.reload)
            return
        state = self.state
        live = self.live.downloads.get(self.id)
        torrent = (lambda: progress_line(live)) if live is not None and state in (State.QUEUED,
                                                                                  State.DOWNLOADING) else None
        with ui.card().classes("w-full gap-1 p-4").props("flat bordered data-section=Download"):
            sections.header(download, torrent)

    @ui.refreshable_method
    def _body(self) -> None:
        state = self._body_state = self.state
        download = self.download
        if download is None:
            return
        if self.error and self.data is not None:
            ui.label(f"Could not refresh: {self.error}").classes("text-sm text-negative")
        data = self.data
        recognition = self.recognition
        deciding = allowed("apply", state)
        review_sections.decision(review.verdict(download, recognition, data.timeline if data else []),
                                 recognition, state)
        if recognition is not None and allowed("upgrade", state):
            review_sections.upgrade_choice(recognition.plan, self.upgrade)
        if recognition is not None:
            items = recognition.candidates
            if recognition.films:
                film_sections.films(recognition, self.film_choices, self.choose_film, self.apply,
                                    can_choose=deciding)
            elif items or deciding:
                review_sections.candidates(items, self.selected, recognition.recommended, self.choose,
                                           self.apply, can_choose=deciding)

    @ui.refreshable_method
    def _corrections(self) -> None:
        """The type/title/year/season fields and the file table, after the candidates."""
        self._shown["corrections"] = self._keys()["corrections"]
        recognition = self.recognition
        if self.download is None or recognition is None:
            return
        deciding = allowed("apply", self.state)
        if deciding:
            self._overrides()
        review_sections.file_table(recognition.plan, self.file_edits, recognition.folder, editable=deciding)

    @ui.refreshable_method
    def _rest(self) -> None:
        """Hints, links, the timeline and the details."""
        self._shown["rest"] = self._keys()["rest"]
        data, state = self.data, self.state
        if self.download is None:
            return
        if data is not None:
            self._hints(data.hints, state)
            if data.links:
                sections.links(data.links)
            sections.timeline(data.timeline)
            sections.details(data)

    def _actions(self) -> None:
        """The action bar: built once; a button shows only in the states that allow it."""
        with ui.row().classes("w-full gap-2 flex-wrap items-center").props(
                "role=toolbar aria-label=Actions") as bar:
            self._toolbar = bar
            self._buttons: dict[str, ui.button] = {}
            handlers: dict[str, Any] = {
                "apply": lambda e: self.apply(e.sender),
                "retry": lambda e: self.simple(Command.RETRY, e.sender, "Retrying."),
                "relink": lambda e: self.simple(Command.RELINK, e.sender, "Laying the files out again."),
                "reject": lambda _e: self.confirm.ask_reject(),
                "undo": lambda _e: self.confirm.ask_undo(),
                "cancel": lambda _e: self.confirm.ask_cancel(),
            }
            labels = {"apply": ("Apply", "done_all"), "retry": ("Retry", "replay"),
                      "relink": ("Relink", "link"), "defer": ("Defer", "schedule"),
                      "reject": ("Reject…", "block"), "undo": ("Undo…", "undo"),
                      "cancel": ("Cancel download…", "cancel")}
            for action in bar_actions():
                text, icon = labels.get(action, (action.replace("_", " ").capitalize(), "play_arrow"))
                if action == "defer":
                    with ui.button(text, icon=icon).props("outline no-caps").mark("defer") as defer:
                        with ui.menu():
                            for hours, label in ((1, "for 1 hour"), (24, "for 1 day"), (168, "for 1 week")):
                                ui.menu_item(f"Defer {label}", on_click=lambda _e, h=hours: self.defer(
                                    h, defer)).mark(f"defer-{hours}")
                    self._buttons["defer"] = defer
                    continue
                style = "unelevated color=positive" if action in PRIMARY else \
                    "flat color=negative" if action in DESTRUCTIVE else "outline"
                handler = handlers.get(action, lambda e, a=action: self.simple(Command(a), e.sender, "Sent."))
                button = ui.button(text, icon=icon, on_click=handler).props(f"{style} no-caps").mark(action)
                if action in DESTRUCTIVE:
                    button.classes("destructive")
                self._buttons[action] = button

    def _update_actions(self) -> None:
        state = self.state
        shown = self.download is not None and any(allowed(c, state) for c in self._buttons)
        self._toolbar.set_visibility(shown)
        # A better-copy question is answered by its own card (Keep both / Replace / Skip), not Apply.
        asks = any(row.status == "held" for row in (self.recognition.plan if self.recognition else []))
        offers = offered(state, asks_upgrade=asks)
        for command, button in self._buttons.items():
            if "loading" not in button.props:  # its request is in flight; `call` restores it
                shown = command in offers
                button.set_enabled(shown)
                button.set_visibility(shown)

    def _overrides(self) -> None:
        with ui.expansion("Correct type, title, year or season", icon="edit").classes("w-full").props(
                "dense bordered"):
            with ui.column().classes("w-full gap-2 p-2"):
                ui.toggle({"movie": "Movie", "series": "Series"}, clearable=True).bind_value(
                    self.form, "media_type").props("aria-label='Media type'")
                ui.input("Title").mark("override-title").bind_value(self.form, "title").classes(
                    "w-full").props("outlined dense")
                with ui.row().classes("w-full gap-2 no-wrap"):
                    ui.number("Year", min=1870, max=2200, precision=0).mark("override-year").bind_value(
                        self.form, "year").props(
                        "outlined dense").classes("grow")
                    ui.number("Season", min=0, max=1000, precision=0).mark("override-season").bind_value(
                        self.form, "season").props(
                        "outlined dense").classes("grow")
                ui.label("Filled fields override what was recognized when you press Apply.").classes(
                    "text-xs text-muted")

    def _hints(self, hints: list[str], state: State | None) -> None:
        with sections.section("Hints"):
            if hints:
                for hint in hints:
                    ui.label(f"“{hint}”").classes("text-sm").style(WRAP)
            else:
                ui.label("No hints yet. A hint is a sentence that helps recognition, "
                         "e.g. “this is the 2014 TV series”.").classes("text-sm text-muted")
            if allowed("refine", state):
                with ui.row().classes("w-full gap-2 items-end"):
                    ui.input("Add a hint").mark("hint").bind_value(self.form, "hint").classes("grow").props(
                        f"outlined dense maxlength={MAX_HINT_CHARS}").style("min-width:12rem")
                    ui.button("Recognize again", icon="psychology",
                              on_click=lambda e: self.refine(e.sender)).props(
                        "aria-label='Add the hint and recognize again'").mark("refine")

    # ------------------------------------------------------------ actions

    def _dialog_host(self) -> ui.element:
        host = self.outside if self.outside is not None else ui.element("div")
        host.clear()  # one dialog at a time; the previous one is gone
        return host

    async def reload(self) -> None:
        """Fetch again and re-render."""
        await self.fetch()
        self.refresh()

    async def catch_up(self) -> None:
        """The live state moved on: fetch again; rebuild the body only if what it shows changed.

        A refetch that brings the same detail (a retained review topic arriving after the page's
        own `get`, say) must not rebuild the file table under the user's cursor: a correction
        typed into an input that is being replaced never reaches the page.
        """
        before, error = self.data, self.error
        await self.fetch()
        if self.data is not None and self.data == before and self.error == error:
            self.refresh_live()
        else:
            self.refresh()

    async def _after(self, data: Any) -> None:
        if data is not None:
            await self.reload()
        else:
            self._update_actions()  # the state may have moved while the request was in flight

    async def apply(self, button: ui.button) -> None:
        """Lay out with the chosen candidate, the corrected fields and the file table's corrections."""
        payload = self.apply_payload()
        if isinstance(payload, str):
            show_error(payload)
            return
        data = await call(self.live, Command.APPLY, payload, button=button,
                          success="Applying: the files are being laid out.")
        await self._after(data)

    async def upgrade(self, choice: str, button: ui.button) -> None:
        """Answer the better-copy question (keep both, replace or skip) and lay out."""
        words = {"keep_both": "Keeping both", "replace": "Replacing the library's copy",
                 "skip": "Skipping this copy"}
        data = await call(self.live, Command.UPGRADE, {"id": self.id, "choice": choice}, button=button,
                          success=f"{words.get(choice, choice)}: laying out.")
        await self._after(data)

    async def refine(self, button: ui.button) -> None:
        """Add the hint and recognize again."""
        hint = (self.form["hint"] or "").strip()
        if not hint:
            notify("Write a hint first.", kind="warning")
            return
        data = await call(self.live, Command.REFINE, {"id": self.id, "hint": hint}, button=button,
                          success="Hint added; recognizing again.")
        if data is not None:
            self.form["hint"] = ""
        await self._after(data)

    async def defer(self, hours: int, button: ui.button) -> None:
        """Keep it in review without notifications for a while."""
        data = await call(self.live, Command.DEFER, {"id": self.id, "hours": hours}, button=button,
                          success="Deferred.")
        await self._after(data)

    async def simple(self, command: Command, button: ui.button, success: str) -> None:
        """Retry, relink or a command without a dialog of its own: no confirmation needed."""
        await self._after(await call(self.live, command, {"id": self.id}, button=button, success=success))

def register(live: Live, *, login: bool) -> None:
    """Add the `/download/{id}` page."""
    timeout = live.request_timeout

    @ui.page("/download/{download_id}", response_timeout=timeout + 3)
    async def download_page(download_id: str, added: str = "") -> None:
        # Ask before rendering anything: a timer in the frame makes NiceGUI send the page early,
        # and the 404 status must be decided before that.
        view = DetailView(live, download_id)
        if valid_id(download_id):
            if (await live.settled()).ok:
                await view.fetch(timeout=timeout)
            elif download_id not in live.downloads:
                view.error = live.health().message
        with frame(live, "Download", current="", login=login):
            if not valid_id(download_id):
                ui.context.client.status_code = 404
                not_found(f"“{download_id[:64]}” is not a download id.")
                return
            if view.missing:
                ui.context.client.status_code = 404
                not_found(f"There is no download {download_id}.")
                return
            if added in ADDED:
                ui.label(ADDED[added]).classes("w-full p-3 rounded bg-primary text-white").props(
                    "role=status data-testid=added-notice")
            view.outside = ui.element("div")
            view.render()

            async def tick() -> None:
                # Live state moved on (or the worker came back): fetch the detail again.
                if view.stale() or (view.data is None and live.health().ok):
                    await view.catch_up()
                elif download_id in live.downloads and live.download_revision(download_id) != seen[0]:
                    seen[0] = live.download_revision(download_id)
                    view.refresh_live()

            seen = [live.download_revision(download_id)]
            ui.timer(0.7, tick)
