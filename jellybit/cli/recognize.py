"""`jellybit recognize`: a dry run of recognition with the configured LLM and metadata providers.

Nothing is stored and nothing is laid out: it prints the reading, the candidates, the reasons
and the plan with the targets naming would give, so a user can tune their setup.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from jellybit import clock, ident
from jellybit.config import Config
from jellybit.core.classify import EXTENSIONS
from jellybit.core.identity import parse_torrent
from jellybit.core.models import Download
from jellybit.core.ports import RecognitionRequest
from jellybit.core.records import MediaType, RecognitionDraft, SourceFile, Work
from jellybit.core.states import State
from jellybit.core.targets import layout_targets
from jellybit.errors import InvalidArgument


def read_file_list(text: str) -> tuple[SourceFile, ...]:
    """One file per line: `PATH` or `SIZE<TAB>PATH` (sizes in bytes; unknown sizes count as 1 GB)."""
    files = []
    for line in text.splitlines():
        line = line.rstrip("\n")
        if not line.strip():
            continue
        size_text, tab, path = line.partition("\t")
        if tab and size_text.strip().isdigit():
            files.append(SourceFile(path.strip(), int(size_text)))
        else:
            files.append(SourceFile(line.strip(), 1 << 30))
    return tuple(files)


def assumed_file(name: str) -> str:
    """The one file a bare NAME stands for: itself when it ends in a media extension, else NAME.mkv.

    `Movie.2010.x264` ends in `.x264`, which is a codec, not an extension.
    """
    suffix = PurePosixPath(name).suffix.lower()
    known = set().union(*EXTENSIONS.values())
    return name if suffix in known else f"{name}.mkv"


def _work(draft: RecognitionDraft) -> Work | None:
    if draft.media_type is None or not draft.title:
        return None
    return Work(draft.media_type, draft.title, draft.year, draft.provider, draft.provider_id,
                draft.original_title)


async def recognize(config: Config, *, name: str, files: tuple[SourceFile, ...], context: str,
                    hints: tuple[str, ...]) -> dict[str, Any]:
    """Run the configured recognizer once and return the result as JSON-ready data."""
    from jellybit.adapters.llm import OpenAiLlm
    from jellybit.adapters.metadata import build_providers, close_providers
    from jellybit.engine.recognizer import RecognitionEngine

    llm = OpenAiLlm(config.llm) if config.llm.enabled else None
    providers = build_providers(config.metadata, None)
    now = clock.now()
    download = Download(id=ident.new_id(), source_type="dry-run", source_ref=name, display_name=name,
                        context=context, state=State.RECOGNIZING, qbt_tag="", created_at=now, updated_at=now)
    try:
        recognizer = RecognitionEngine(llm=llm, providers=providers, config=config.recognition)
        draft = await recognizer.recognize(RecognitionRequest(download=download, files=files, hints=hints))
    finally:
        await close_providers(providers)
        if llm is not None:
            await llm.close()
    plan = layout_targets(draft.plan, _work(draft))
    return {
        "name": name,
        "media_type": draft.media_type.value if isinstance(draft.media_type, MediaType) else None,
        "title": draft.title, "original_title": draft.original_title, "year": draft.year,
        "provider": draft.provider, "provider_id": draft.provider_id,
        "confidence": draft.confidence, "recommendation": draft.recommendation.value,
        "automatic": draft.automatic,
        "reasons": [asdict(r) for r in draft.reasons],
        "candidates": [{k: v for k, v in asdict(c).items() if k != "details"} for c in draft.candidates],
        "films": [{"title": f.title, "year": f.year, "provider": f.provider, "provider_id": f.provider_id,
                   "match": f.match_title, "match_year": f.match_year, "confidence": f.confidence,
                   "confirmed": f.confirmed, "reasons": [asdict(r) for r in f.reasons]}
                  for f in draft.plan.films],
        "plan": [{"source": i.source, "role": i.role.value, "season": i.season, "episodes": list(i.episodes),
                  "language": i.language, "library": i.library, "target": i.target, "status": i.status}
                 for i in plan.items],
    }


def render(result: dict[str, Any], out: TextIO) -> None:
    """Human-readable output."""
    title = result["title"] or "?"
    year = f" ({result['year']})" if result["year"] else ""
    match = f"{result['provider']}:{result['provider_id']}" if result["provider"] else "no confirmed match"
    out.write(f"{result['name']}\n  reading: {result['media_type'] or '?'} — {title}{year} — {match}\n")
    confidence = result["confidence"]
    shown = f"{confidence:.2f}" if isinstance(confidence, float) else "-"
    out.write(f"  recommendation: {result['recommendation']} (confidence {shown}); "
              f"{'would be laid out automatically' if result['automatic'] else 'would go to review'}\n")
    if result.get("assumed_file"):
        out.write(f"  files: none given, so the name stands for one file, '{result['assumed_file']}'; "
                  "for a pack pass --torrent FILE or --files LIST\n")
    for reason in result["reasons"]:
        out.write(f"  {'BLOCKS' if reason['blocking'] else 'note  '}  {reason['message']}\n")
    for film in result.get("films", ()):
        read = film["title"] + (f" ({film['year']})" if film["year"] else "")
        match = f"{film['provider']}:{film['provider_id']} {film['match']} ({film['match_year']})" \
            if film["provider"] else "no match"
        out.write(f"  film  {read} -> {match}; {'sure' if film['confirmed'] else 'a human decides'}\n")
    for candidate in result["candidates"][:10]:
        mark = "*" if candidate["chosen"] else " "
        out.write(f"  {mark} {candidate['provider']}:{candidate['provider_id']}  {candidate['title']} "
                  f"({candidate['year']})  distance {candidate['distance']}\n")
    for item in result["plan"]:
        target = (f"{item['library']}/{item['target']}" if item["target"]
                  else f"({item['status'] or item['role']})")
        out.write(f"    {item['source']}  ->  {target}\n")


def run_recognize(args: argparse.Namespace, config: Config, out: TextIO = sys.stdout) -> int:
    """Entry point of the subcommand."""
    name = args.name
    files: tuple[SourceFile, ...] = ()
    if args.torrent:
        meta = parse_torrent(Path(args.torrent).read_bytes(), config.worker.max_torrent_bytes)
        name = name or meta.name
        files = tuple(meta.files)
    if args.files:
        text = sys.stdin.read() if args.files == "-" else Path(args.files).read_text(encoding="utf-8")
        files = read_file_list(text)
    if not name:
        raise InvalidArgument("give a release NAME or --torrent FILE")
    assumed = None
    if not files:
        assumed = assumed_file(name)
        files = (SourceFile(assumed, 1 << 30),)
    result = asyncio.run(recognize(config, name=name, files=files, context=args.context,
                                   hints=tuple(args.hint or ())))
    result["assumed_file"] = assumed
    if args.json:
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    else:
        render(result, out)
    return 0
