"""The status page: broker, worker, qBittorrent, LLM, metadata providers, Jellyfin and Telegram, from
`info`, each with what to do when it is not working."""

from __future__ import annotations

import json

from nicegui import ui

from jellybit import __version__
from jellybit.present import provider_name, service_detail, service_heading, service_state
from jellybit.protocol import AVAILABILITY_ONLINE, ComponentStatus, SystemStatus
from ui import format as fmt
from ui.frame import WRAP, frame
from ui.live import Live

# The icon and colour of each state word of an outside service (the words are `jellybit.present`'s).
SERVICE_ICONS = {
    "ok": ("check_circle", "positive"),
    "misconfigured": ("warning", "warning"),         # reachable, but cannot do its part
    "refused": ("key_off", "negative"),
    "unreachable": ("error", "negative"),
    "not configured": ("remove_circle_outline", "grey-7"),
    "starting": ("radio_button_unchecked", "blue-grey-8"),
}


def system_words(status: SystemStatus) -> tuple[str, str, str]:
    """(label, icon, colour) for one outside system: the state word every face uses, with its icon."""
    icon, colour = SERVICE_ICONS.get(service_state(status), ("help", "grey-7"))
    return service_heading(status), icon, colour


def row(name: str, label: str, icon: str, colour: str, detail: str = "") -> None:
    """One line: icon, name, status in words, detail."""
    with ui.row().classes("w-full items-start gap-3 no-wrap py-1").props(f"data-system='{name}'"):
        ui.icon(icon, color=colour).classes("mt-1").props(f"aria-label='{label}'")
        with ui.column().classes("gap-0").style("min-width:0"):
            ui.label(f"{name}: {label}").classes("font-medium")
            if detail:
                ui.label(detail).classes("text-sm text-muted").style(WRAP)


def register(live: Live, *, login: bool) -> None:
    """Add the `/status` page."""

    @ui.page("/status")
    def status_page() -> None:
        with frame(live, "Status", current="/status", login=login):
            ui.label("Status").classes("text-h5")

            if live.config.panel.open and not live.config.panel.username:
                with ui.card().classes("w-full gap-1 p-4 bg-warning text-black").props(
                        "flat bordered role=alert data-section=open-panel"):
                    ui.label("This panel is open").classes("text-h6")
                    ui.label("It serves without a login (panel.open = true): anyone who can reach it can "
                             "add, apply, undo and delete. Set panel.username and panel.password unless "
                             "this network is trusted.").classes("text-sm").style(WRAP)

            @ui.refreshable
            def body() -> None:
                with ui.card().classes("w-full gap-1 p-4").props("flat bordered"):
                    if live.client is not None:
                        row("MQTT broker", "Connected", "check_circle", "positive", live.config.mqtt.url)
                    else:
                        row("MQTT broker", "Unreachable", "error", "negative",
                            f"{live.config.mqtt.url} — {live.broker_error or 'not connected'}")
                    info = live.info
                    online = live.availability == AVAILABILITY_ONLINE
                    detail = ""
                    if info is not None:
                        detail = (f"version {info.version}, protocol {info.protocol}, "
                                  f"started {fmt.stamp(info.started_at)}")
                    if online:
                        row("Worker", "Online", "check_circle", "positive", detail)
                    else:
                        row("Worker", "Offline" if live.availability else "Never seen", "error", "negative",
                            detail or "No worker has published its state on this broker.")
                    if info is not None:
                        for name, status in (("qBittorrent", info.qbittorrent), ("LLM", info.llm),
                                             ("Jellyfin", info.jellyfin), ("Telegram", info.telegram)):
                            label, icon, colour = system_words(status)
                            row(name, label, icon, colour, _detail(status))
                        if info.metadata:
                            for provider, status in sorted(info.metadata.items()):
                                label, icon, colour = system_words(status)
                                row(f"{provider_name(provider)} (metadata)", label, icon, colour,
                                    _detail(status))
                        else:
                            row("Metadata providers", "None enabled", "remove_circle_outline", "grey-7",
                                "Without metadata every download goes to review.")
                        for name, title in STORAGE.items():
                            if (component := info.components.get(name)) is not None:
                                label, icon, colour = storage_words(component)
                                row(title, label, icon, colour, _component_detail(component))
                        for name, component in sorted(info.components.items()):
                            if name in STORAGE:
                                continue
                            if component.error or component.restarts or not component.running:
                                label, icon, colour = component_words(component)
                                row(f"Worker {name} loop", label, icon, colour, _component_detail(component))
                summary = live.summary
                if summary is not None:
                    with ui.card().classes("w-full gap-1 p-4").props("flat bordered data-section=Counts"):
                        ui.label("Downloads").classes("text-h6")
                        counts = [f"{fmt.state_name(s)}: {n}" for s, n in summary.states.items() if n]
                        ui.label(", ".join(counts) or "None yet.").classes("text-sm").style(WRAP)
                        if summary.last_completed is not None:
                            ui.label(f"Last done: {summary.last_completed.title} "
                                     f"({fmt.ago(summary.last_completed.at)})").classes("text-sm").style(WRAP)
                ui.label(f"Panel {__version__}").classes("text-xs text-muted")
                if info is not None:
                    with ui.expansion("Details (raw data)", icon="data_object").classes("w-full").props(
                            "dense"):
                        ui.code(json.dumps(info.model_dump(mode="json"), indent=2, ensure_ascii=False),
                                language="json").classes("w-full text-xs")

            def key() -> tuple[object, ...]:
                return (live.client is not None, live.broker_error, live.availability, live.info,
                        live.summary)

            body()
            seen = [key()]

            def tick() -> None:
                # Not on every download change: that would fold the details away while someone reads them.
                if key() != seen[0]:
                    seen[0] = key()
                    body.refresh()

            ui.timer(1.0, tick)


# The storage the worker writes to, as `info.components` names it (docs/mqtt-api.md, "Storage faults").
STORAGE = {"database": "Database", "library.movies": "Movies library", "library.series": "Series library"}
STORAGE_LABELS = {"storage_full": "Disk full", "storage_read_only": "Read-only",
                  "storage_missing": "File gone", "storage_locked": "Locked", "library_full": "Disk full",
                  "library_read_only": "Read-only", "library_unmounted": "Not mounted"}


def storage_words(component: ComponentStatus) -> tuple[str, str, str]:
    """(label, icon, colour) for the database or a library root: writable, or its fault."""
    if component.code:
        return STORAGE_LABELS.get(component.code, "Failing"), "error", "negative"
    return "Writable", "check_circle", "positive"


def component_words(component: ComponentStatus) -> tuple[str, str, str]:
    """(label, icon, colour) for one of the worker's own loops that failed at some point."""
    if not component.running:
        return "Stopped", "error", "negative"
    if component.error:
        return "Failing", "warning", "negative"
    return "Recovered", "check_circle", "positive"


def _component_detail(component: ComponentStatus) -> str:
    when = ""
    if component.failed_at:
        when = f"{'since' if component.error else 'last failure'} {fmt.stamp(component.failed_at)}"
    parts = [f"restarted {component.restarts}×" if component.restarts else "", component.error or "", when]
    return " — ".join(p for p in parts if p)


def _detail(status: SystemStatus) -> str:
    # A reachable service has a hint only when something it does is off (qBittorrent's early layout).
    hint = f"What to do: {status.hint}" if status.hint else ""
    version = f"version {status.version}" if status.version else ""
    return " — ".join(p for p in (version, service_detail(status), hint) if p)
