"""What the bot shows, read as protocol models: built by the payload code the MQTT answers use."""

from __future__ import annotations

from collections.abc import Iterable

from jellybit.core.models import Download
from jellybit.engine.commands import Commands
from jellybit.engine.results import AddOutcome
from jellybit.protocol import (
    AddResult,
    DownloadDetail,
    DownloadPayload,
    ListPage,
    State,
    SummaryPayload,
    SystemStatus,
)
from jellybit.transports import payloads, service_health


async def detail(commands: Commands, download_id: str) -> DownloadDetail:
    """`get` as the MQTT answer carries it."""
    return DownloadDetail.model_validate(payloads.detail_payload(await commands.get(download_id)))


async def page(commands: Commands, states: Iterable[State], limit: int) -> ListPage:
    """`list` (newest first) as the MQTT answer carries it."""
    rows = await commands.list_rows(states=[State(s).value for s in states], limit=limit)
    return ListPage.model_validate(payloads.list_page(rows, limit, 0))


async def added(commands: Commands, outcome: AddOutcome) -> AddResult:
    """`add`'s answer for one source."""
    view = await commands.view(outcome.download.id)
    return AddResult.model_validate(payloads.add_result(outcome, view))


async def summary(commands: Commands) -> SummaryPayload:
    """The counts of the retained `summary` topic."""
    return payloads.summary_payload(await commands.summary(), None)


async def status(commands: Commands, qbittorrent_url: str) -> tuple[str, SystemStatus]:
    """Jellybit's version and qBittorrent as `info.qbittorrent` carries it (the worker's last poll)."""
    found = await commands.status()
    qbt = found.qbittorrent
    return found.version, service_health.qbittorrent_health(qbittorrent_url, qbt.reachable, qbt.error,
                                                            qbt.version, qbt.early_layout)


async def download(commands: Commands, record: Download) -> DownloadPayload:
    """A command's answer (the download it changed) as the MQTT answer carries it."""
    view = await commands.view(record.id)
    return DownloadPayload.model_validate(payloads.download_row(record, view.recognition if view else None))
