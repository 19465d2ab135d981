"""The worker side of MQTT requests: one handler per protocol command.

A handler turns a validated request into one `Commands` call and its result into JSON data (the
payload code the other faces share); the bridge routes, answers and remembers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from jellybit.core.models import Download
from jellybit.engine.commands import Commands
from jellybit.protocol import (
    AddRequest,
    ApplyRequest,
    CancelRequest,
    Command,
    DeferRequest,
    DeleteTitleRequest,
    IdRequest,
    ListRequest,
    NotifyRequest,
    RefineRequest,
    RejectRequest,
    Request,
    UpgradeRequest,
)
from jellybit.transports.payloads import (
    add_result,
    detail_payload,
    download_row,
    list_page,
    plain,
    undo_result,
)


def build_handlers(commands: Commands) -> dict[Command, Callable[[Request], Awaitable[Any]]]:
    """One handler per protocol command."""

    async def dl(download: Download) -> dict[str, Any]:
        view = await commands.view(download.id)
        return download_row(download, view.recognition if view else None)

    async def add(r: Request) -> Any:
        assert isinstance(r, AddRequest)
        result = await commands.add(source=r.source, torrent=r.torrent_bytes(), context=r.context)
        return add_result(result, await commands.view(result.download.id))

    async def apply(r: Request) -> Any:
        assert isinstance(r, ApplyRequest)
        overrides = r.overrides.model_dump(mode="json", exclude_none=True) if r.overrides else None
        return await dl(await commands.apply(r.id, candidate_id=r.candidate_id, overrides=overrides))

    async def upgrade(r: Request) -> Any:
        assert isinstance(r, UpgradeRequest)
        return await dl(await commands.upgrade(r.id, choice=r.choice.value))

    async def refine(r: Request) -> Any:
        assert isinstance(r, RefineRequest)
        return await dl(await commands.refine(r.id, hint=r.hint))

    async def reject(r: Request) -> Any:
        assert isinstance(r, RejectRequest)
        return await dl(await commands.reject(r.id, reason=r.reason))

    async def defer(r: Request) -> Any:
        assert isinstance(r, DeferRequest)
        return await dl(await commands.defer(r.id, until=r.until, hours=r.hours))

    async def undo(r: Request) -> Any:
        assert isinstance(r, IdRequest)
        outcome = await commands.undo(r.id)
        return undo_result(outcome, await commands.view(outcome.download.id))

    async def retry(r: Request) -> Any:
        assert isinstance(r, IdRequest)
        return await dl(await commands.retry(r.id))

    async def cancel(r: Request) -> Any:
        assert isinstance(r, CancelRequest)
        return await dl(await commands.cancel(r.id, delete_data=r.delete_data, confirm=r.confirm))

    async def relink(r: Request) -> Any:
        assert isinstance(r, IdRequest)
        return await dl(await commands.relink(r.id))

    async def delete_title(r: Request) -> Any:
        assert isinstance(r, DeleteTitleRequest)
        return plain(await commands.delete_title(r.provider, r.provider_id,
                                                 delete_torrents=r.delete_torrents, confirm=r.confirm))

    async def get(r: Request) -> Any:
        assert isinstance(r, IdRequest)
        return detail_payload(await commands.get(r.id))

    async def list_(r: Request) -> Any:
        assert isinstance(r, ListRequest)
        states = [s.value for s in r.states] if r.states is not None else None
        rows = await commands.list_rows(states=states, text=r.text, limit=r.limit, offset=r.offset)
        return list_page(rows, r.limit, r.offset)

    async def titles(r: Request) -> Any:
        return plain(await commands.titles())

    async def notify(r: Request) -> Any:
        assert isinstance(r, NotifyRequest)
        commands.notify(r.hash)
        return {"woken": True}

    return {
        Command.ADD: add, Command.APPLY: apply, Command.UPGRADE: upgrade, Command.REFINE: refine,
        Command.REJECT: reject,
        Command.DEFER: defer, Command.UNDO: undo, Command.RETRY: retry, Command.CANCEL: cancel,
        Command.RELINK: relink, Command.DELETE_TITLE: delete_title, Command.GET: get,
        Command.LIST: list_, Command.TITLES: titles, Command.NOTIFY: notify,
    }
