"""The recognizer's track step: subtitle/audio languages and flags from pins, names, the LLM and the text."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence

from jellybit.core.models import Download
from jellybit.core.numbering import Overrides
from jellybit.core.ports import LlmFileAnswer, SubtitleSample, SubtitleSampler
from jellybit.core.records import PlanItem, Reason
from jellybit.core.tracks import apply_samples, plan_sampling, settle_known, unknown_language
from jellybit.errors import JellybitError
from jellybit.logs import for_download

log = logging.getLogger(__name__)


async def settle_tracks(
    sampler: SubtitleSampler | None, download: Download, items: Sequence[PlanItem], overrides: Overrides,
    llm: Mapping[str, LlmFileAnswer], *, source: str = "the LLM", pending: Collection[str] = (),
) -> tuple[list[PlanItem], list[Reason]]:
    """Languages in order (pinned, name, LLM, text); a sampler failure leaves them unknown, never raises.

    A file in `pending` is still downloading: its text is not read now (its head may be zeros) but
    when it completes, by the recognition that checks the completed files.
    """
    settled = settle_known(items, overrides, llm, source=source)
    sampling = plan_sampling(settled)
    samples: Mapping[str, SubtitleSample] = {}
    not_read = "subtitle text is not read (no reader is configured)"
    readable = tuple(s for s in sampling.read if s not in pending)
    if sampler is not None and len(readable) < len(sampling.read):
        not_read = "still downloading: its text is read when the file completes"
    if readable and sampler is not None:
        try:
            samples = await sampler.sample(download, readable)
        except Exception as exc:
            if not isinstance(exc, JellybitError):
                log.exception("subtitle sampler crashed", **for_download(download.id))
            not_read = "its text could not be read: " + (exc.message if isinstance(exc, JellybitError)
                                                         else f"{type(exc).__name__}: {exc}")[:200]
    pinned_flags = {path for path, pin in overrides.files.items() if pin.flags is not None}
    filled = apply_samples(settled, sampling, samples, pinned_flags=pinned_flags, not_read=not_read)
    return unknown_language(filled)
