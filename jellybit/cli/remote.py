"""CLI subcommands that talk to the worker over MQTT, like every other client.

Exit codes: 0 ok, 1 the worker answered with an error, 4 no answer (worker or broker down).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from jellybit.cli.ids import IdNotFound, resolve_id
from jellybit.cli.show import candidate_by_number, review_block
from jellybit.client import JellybitClient, NoAnswer
from jellybit.config import Config
from jellybit.protocol import (
    AddResult,
    Command,
    DownloadDetail,
    DownloadPayload,
    JellyfinPayload,
    ListPage,
    Provider,
    Response,
    TitleGroup,
    UndoResult,
)

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_NO_ANSWER = 4
WAIT_UNTIL = {"review", "done", "failed", "cancelled", "reverted", "deleted", "orphaned", "target_missing"}


def _human_size(value: int | None) -> str:
    if not value:
        return "-"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return str(value)


def format_download(item: DownloadPayload) -> str:
    """One line for a download: id, state, progress, title or name."""
    title = item.title or item.name
    if item.year:
        title += f" ({item.year})"
    return f"{item.id}  {item.state:<14} {item.progress * 100:5.1f}%  {title}"


def format_title(group: TitleGroup) -> str:
    """A title group: the work, its folders and per-season episode coverage."""
    name = group.title or "?"
    if group.year:
        name += f" ({group.year})"
    lines = [f"{group.provider}:{group.provider_id}  {name}  [{group.media_type or '?'}]"]
    lines.extend(f"  folder: {folder}" for folder in group.folders)
    for season, episodes in sorted(group.seasons.items()):
        lines.append(f"  season {season:02d}: episodes {_ranges(episodes)}")
    lines.extend(f"  download {member.download_id}  {member.state}  {member.display_name}"
                 for member in group.members)
    return "\n".join(lines)


def _ranges(numbers: list[int]) -> str:
    """1,2,3,5 -> '1-3, 5'."""
    values = sorted(set(int(n) for n in numbers))
    parts: list[str] = []
    start = prev = None
    for n in [*values, None]:
        if start is None:
            start = prev = n
        elif n is not None and n == prev + 1:
            prev = n
        else:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = prev = n
    return ", ".join(parts) or "-"


def jellyfin_words(state: JellyfinPayload) -> str:
    """Whether Jellyfin lists the download, in words: the link, the wait, or what to check."""
    if state.status == "found":
        return f"in Jellyfin: {state.url or state.item_id}"
    if state.status == "pending":
        return "laid out; waiting for Jellyfin to list it"
    return f"not in Jellyfin yet ({state.status}): {state.note or 'no reason recorded'}"


def format_detail(data: DownloadDetail) -> str:
    """A readable block for `show`: the download, then the decision (cli/show.py), then the timeline."""
    download = data.download
    lines = [format_download(download)]
    if download.title and download.name:
        lines.append(f"  release: {download.name}")
    for key in ("context", "source_type", "target_folder", "torrent_state"):
        if getattr(download, key):
            lines.append(f"  {key.replace('_', ' ')}: {getattr(download, key)}")
    lines.append(f"  size: {_human_size(download.size)}")
    if download.error:
        lines.append(f"  error: {download.error.code}: {download.error.message}")
    if download.jellyfin is not None:
        lines.append(f"  jellyfin: {jellyfin_words(download.jellyfin)}")
    lines.append("")
    lines.extend(review_block(data))
    if data.timeline:
        lines.append("Timeline:")
    for item in data.timeline:
        lines.append(f"  {item.at}  {item.from_ or '-'} -> {item.to}  {item.reason}")
    return "\n".join(lines)


def _print_response(response: Response[Any], command: str, args: argparse.Namespace, out: TextIO) -> int:
    if args.json:
        # Exactly what the worker sent: only the fields it set, under their wire names.
        out.write(response.model_dump_json(by_alias=True, exclude_unset=True) + "\n")
    elif response.status == "error":
        assert response.error is not None
        sys.stderr.write(f"jellybit: {response.error.message} ({response.error.code})\n")
        if response.error.code == "confirmation_required":
            # The worker's message speaks the MQTT field; on the command line that is --yes.
            sys.stderr.write("jellybit: run it again with --yes to confirm\n")
    else:
        data = response.data
        if isinstance(data, ListPage):
            for item in data.items:
                out.write(format_download(item) + "\n")
            out.write(f"({len(data.items)} of {data.total})\n")
        elif isinstance(data, DownloadDetail):
            out.write(format_detail(data) + "\n")
        elif command == "titles":
            for group in data:
                out.write(format_title(group) + "\n")
            out.write(f"({len(data)} title{'' if len(data) == 1 else 's'})\n")
        elif isinstance(data, AddResult):
            verb = "created" if data.created else "joined the active download"
            out.write(f"{data.id}  {verb}\n")
            if data.settled_before:
                out.write(f"  processed before as: {', '.join(data.settled_before)}\n")
        elif isinstance(data, DownloadPayload):
            out.write(format_download(data) + "\n")
        elif isinstance(data, UndoResult):
            out.write(format_download(data.download) + "\n")
        else:
            shown = response.model_dump(mode="json", by_alias=True, exclude_unset=True).get("data")
            out.write(json.dumps(shown, ensure_ascii=False, indent=2) + "\n")
    return EXIT_OK if response.status == "ok" else EXIT_ERROR


def build_request(args: argparse.Namespace) -> tuple[Command, dict[str, Any]]:
    """Turn parsed arguments into (command, payload)."""
    command = args.remote
    payload: dict[str, Any] = {}
    if args.transaction:
        payload["transaction"] = args.transaction
    if command == "add":
        if args.torrent:
            payload["torrent"] = base64.b64encode(Path(args.torrent).read_bytes()).decode()
        if args.source:
            payload["source"] = args.source
        payload["context"] = args.context or ""
        return Command.ADD, payload
    if command == "show":
        return Command.GET, {**payload, "id": args.id}
    if command == "list":
        payload.update(limit=args.limit, offset=args.offset)
        if args.state:
            payload["states"] = args.state
        if args.text:
            payload["text"] = args.text
        return Command.LIST, payload
    if command == "titles":
        return Command.TITLES, payload
    if command == "notify":
        return Command.NOTIFY, {**payload, "hash": args.hash} if args.hash else payload
    if command == "delete-title":
        payload.update(provider=args.provider, provider_id=args.provider_id,
                       delete_torrents=args.delete_torrents, confirm=args.yes)
        return Command.DELETE_TITLE, payload
    payload["id"] = args.id
    if command == "apply":
        if args.candidate:
            payload["candidate_id"] = args.candidate
        overrides = {k: v for k, v in {
            "media_type": args.type, "title": args.title, "year": args.year, "season": args.season,
        }.items() if v is not None}
        if overrides:
            payload["overrides"] = overrides
    elif command == "upgrade":
        payload["choice"] = args.choice.replace("-", "_")
    elif command == "refine":
        payload["hint"] = args.hint
    elif command == "reject" and args.reason:
        payload["reason"] = args.reason
    elif command == "defer":
        payload["hours"] = args.hours
    elif command == "cancel":
        payload.update(delete_data=args.delete_data, confirm=args.yes)
    return Command(command), payload


async def _wait(client: JellybitClient, download_id: str, out: TextIO, as_json: bool) -> int:
    topic = client.topics.download(download_id)
    last = ""
    async for _topic, payload, _retained in client.watch(topic):
        if not payload:
            continue
        item = DownloadPayload.model_validate_json(payload)
        line = f"{item.progress * 100:5.1f}%  {item.state:<12} {item.title or item.name}"
        if as_json:
            out.write(item.model_dump_json() + "\n")
        elif not out.isatty():
            # A log or a pipe gets one line per change, not a redrawn bar.
            if line != last:
                out.write(line + "\n")
            last = line
        else:
            width = 30
            filled = int(item.progress * width)
            out.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {item.progress * 100:5.1f}%  "
                      f"{item.state:<12} {item.title or item.name}"[:120])
        out.flush()
        if item.state in WAIT_UNTIL:
            if not as_json and out.isatty():
                out.write("\n")
            if item.state == "review" and not as_json:
                # Ended in review: say why and what to run, not just the state.
                detail = await client.request(Command.GET, {"id": download_id})
                if detail.status == "ok":
                    out.write("\n".join(review_block(detail.data)) + "\n")
            return EXIT_OK if item.state in {"done", "review"} else EXIT_ERROR
    return EXIT_NO_ANSWER


async def run_remote(args: argparse.Namespace, config: Config, out: TextIO = sys.stdout) -> int:
    """Send one command to the worker and print the answer."""
    try:
        command, payload = build_request(args)
    except OSError as exc:
        sys.stderr.write(f"jellybit: cannot read {exc.filename or args.torrent}: {exc.strerror or exc}\n")
        return EXIT_USAGE
    try:
        async with JellybitClient(config.mqtt, name="cli") as client:
            if "id" in payload and command is not Command.ADD:
                try:
                    payload["id"] = await resolve_id(client, str(payload["id"]), args.timeout)
                except IdNotFound as exc:
                    sys.stderr.write(f"jellybit: {exc}\n")
                    return EXIT_USAGE
            if command is Command.APPLY and str(payload.get("candidate_id") or "").isdigit():
                # `--candidate N` is the N-th candidate as `show` numbers them.
                number = int(payload["candidate_id"])
                detail = await client.request(Command.GET, {"id": payload["id"]}, timeout=args.timeout)
                found = candidate_by_number(detail.data, number) if detail.status == "ok" else None
                if detail.status == "ok" and found is None:
                    sys.stderr.write(f"jellybit: there is no candidate {number}; `jellybit show "
                                     f"{payload['id']}` lists them\n")
                    return EXIT_USAGE
                if found is not None:
                    payload["candidate_id"] = found
            response = await client.request(command, payload, timeout=args.timeout)
            code = _print_response(response, args.remote, args, out)
            if code == EXIT_OK and command is Command.ADD and args.wait:
                return await asyncio.wait_for(_wait(client, response.data.id, out, args.json),
                                              args.wait_timeout)
            return code
    except NoAnswer as exc:
        sys.stderr.write(f"jellybit: {exc}\n")
        hint = getattr(args, "config_hint", "")
        if hint:
            sys.stderr.write(f"jellybit: {hint}\n")
        return EXIT_NO_ANSWER
    except TimeoutError:
        sys.stderr.write("jellybit: gave up waiting for the download to finish\n")
        return EXIT_NO_ANSWER


def add_remote_commands(sub: Any, handler: Any) -> None:
    """Register the over-MQTT subcommands on an argparse subparsers object."""

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=handler, remote=name)
        p.add_argument("--json", action="store_true", help="print the raw response as JSON")
        p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for an answer")
        p.add_argument("--transaction", help="idempotency key: a repeat is not executed twice")
        return p

    p = add("add", "add a torrent (magnet, URL, infohash, or --torrent FILE)")
    p.add_argument("source", nargs="?", help="magnet link, http(s) URL or bare infohash")
    p.add_argument("--torrent", metavar="FILE", help="a .torrent file")
    p.add_argument("--context", default="", help="what it is, in a sentence")
    p.add_argument("--wait", action="store_true", help="show progress until done or review")
    p.add_argument("--wait-timeout", type=float, default=24 * 3600, help="give up waiting after this")
    p = add("list", "list downloads")
    p.add_argument("--state", action="append", help="only this state (repeatable)")
    p.add_argument("--text", help="search names and contexts")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)
    p = add("show", "show one download with its timeline and recognition")
    p.add_argument("id", help="its id, or the start of it")
    add("titles", "list the computed titles")
    p = add("notify", "tell the worker qBittorrent finished a torrent (qBittorrent's completion hook)")
    p.add_argument("hash", nargs="?", help="the torrent's infohash (qBittorrent's %%I)")
    p = add("apply", "lay out a download in review")
    p.add_argument("id")
    p.add_argument("--candidate", help="the candidate to lay out: its number in `show`, or its id")
    p.add_argument("--type", choices=["movie", "series"], help="override the media type")
    p.add_argument("--title", help="override the title")
    p.add_argument("--year", type=int, help="override the year")
    p.add_argument("--season", type=int, help="override the season")
    p = add("upgrade", "answer a review's better-copy question: keep both, replace, or skip")
    p.add_argument("id")
    p.add_argument("choice", choices=["keep-both", "replace", "skip", "keep_both"],
                   help="keep-both: a Jellyfin version beside it; replace: the old library link goes "
                        "(undo brings it back; its download stays); skip: lay nothing of this copy")
    p = add("refine", "add a hint and recognize again")
    p.add_argument("id")
    p.add_argument("hint")
    p = add("reject", "reject a download in review")
    p.add_argument("id")
    p.add_argument("--reason")
    p = add("defer", "keep a download in review without notifications")
    p.add_argument("id")
    p.add_argument("--hours", type=float, default=24.0)
    for name, text in (("undo", "remove the links a download laid out"),
                       ("retry", "retry a failed, cancelled or reverted download"),
                       ("relink", "lay out again a download whose library files are missing")):
        add(name, text).add_argument("id")
    p = add("cancel", "cancel an active download")
    p.add_argument("id")
    p.add_argument("--delete-data", action="store_true", help="also remove the torrent and its data")
    p.add_argument("--yes", action="store_true", help="confirm deleting data")
    p = add("delete-title", "undo every download of a title")
    p.add_argument("provider", choices=[p.value for p in Provider])
    p.add_argument("provider_id")
    p.add_argument("--delete-torrents", action="store_true", help="also remove the torrents")
    p.add_argument("--yes", action="store_true", help="confirm removing torrents")
