"""Every reason Jellybit gives, in one table: its weight, whether it blocks, and what it means.

A reason is either *blocking* (only a human can move the download on) or *informational* (a
note shown in the review and the timeline; it may cost confidence through its weight but never
stops automatic layout by itself). The pipeline decides on the blocking ones alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from jellybit.core.records import Reason
from jellybit.core.storage import LIBRARY_CODES
from jellybit.core.storage import MEANINGS as STORAGE_MEANINGS


@dataclass(frozen=True)
class Penalty:
    """One named reason: its full weight, whether it stops automation, and what it means."""

    code: str
    weight: float
    blocking: bool
    meaning: str


# docs/recognition.md lists the same table; a test keeps the two in step.
PENALTIES: dict[str, Penalty] = {p.code: p for p in (
    # the reading itself
    Penalty("no_title", 1.0, True, "neither the release name nor the LLM gives a title"),
    Penalty("llm_unavailable", 0.0, False, "the LLM is set up but could not be asked; decided without it"),
    Penalty("context_read", 0.0, False, "what the context and hints stated, and the words it came from"),
    Penalty("context_unused", 0.0, True, "words of the context or hints that could change the decision were "
            "not used and no LLM read them"),
    Penalty("context_season", 0.0, True, "the context or a hint names another season than the file names"),
    Penalty("context_note", 0.0, False, "words of the context matched nothing but could not change the "
            "decision; shown, not used"),
    Penalty("llm_answer_dropped", 0.0, False, "parts of the LLM's answer named missing files or bad values"),
    Penalty("llm_type", 0.20, False, "the parser and the LLM disagree on movie vs series"),
    Penalty("llm_title", 0.15, False, "the parser and the LLM disagree on the title"),
    Penalty("llm_year", 0.10, False, "the parser and the LLM disagree on the year"),
    Penalty("llm_season", 0.15, False, "the parser and the LLM disagree on the season"),
    Penalty("llm_episodes", 0.15, False, "the parser and the LLM number some files differently"),
    # the match
    Penalty("no_provider", 1.0, True, "no metadata provider is configured"),
    Penalty("provider_error", 0.05, False, "a metadata provider failed; its candidates are missing"),
    Penalty("provider_unavailable", 1.0, True, "a provider was down and nothing confirmed a match; retried"),
    Penalty("no_candidate", 1.0, True, "no provider found a candidate"),
    Penalty("title_distance", 0.50, False, "the best candidate's names differ from the title read"),
    Penalty("year_distance", 0.30, False, "the best candidate's year differs from the year read"),
    Penalty("year_unknown", 0.05, False, "the release gives no year to tell films of one title apart"),
    Penalty("type_mismatch", 0.35, False, "the best candidate is of the other media type"),
    Penalty("country_mismatch", 0.20, False, "the candidate's origin country is not the country read"),
    Penalty("season_absent", 0.30, False, "the candidate has no season of the number read (ranks it lower)"),
    Penalty("episodes_absent", 0.30, False, "the candidate's season has fewer episodes than the files "
            "number (ranks it lower)"),
    Penalty("small_margin", 0.15, True, "the runner-up is nearly as good as the best candidate"),
    # the numbering
    Penalty("season_not_found", 0.30, True, "a season in the plan does not exist at the provider"),
    Penalty("episode_not_in_season", 0.30, True, "an episode number is beyond the provider's season"),
    Penalty("seasons_unknown", 0.05, False, "the provider gave no episode counts to check against"),
    Penalty("season_assumed", 0.05, False, "no season in the names; season 1 assumed"),
    Penalty("absolute_mapped", 0.05, False, "absolute numbers were mapped onto the provider's seasons"),
    Penalty("numbering_conflict", 0.40, True, "the file name and its folder number a video differently "
            "and the provider's data does not settle which is right"),
    Penalty("air_date_unlisted", 0.30, True, "a video named by air date has no single episode aired that "
            "day at the provider"),
    Penalty("unmapped_video", 0.40, True, "a video file has no season/episode (or film) assigned"),
    Penalty("duplicate_episode", 0.40, True, "two video files claim the same episode"),
    Penalty("movie_pack", 0.0, False, "several films in one torrent, each matched on its own"),
    Penalty("film_uncertain", 0.0, True, "a film of a movie pack is not matched surely; a human decides that "
            "film, the sure ones stay as matched"),
    Penalty("unattached_track", 0.0, False, "a subtitle or audio file matches no video and is left out"),
    Penalty("subtitle_language_unknown", 0.0, False, "a subtitle's language is in neither its name, the "
            "LLM's answer nor (readably) its text; it is linked without a language tag"),
    Penalty("llm_role_refused", 0.0, False, "the LLM's file roles would leave no main video; not used"),
    # the pipeline
    Penalty("no_files", 1.0, True, "qBittorrent lists no complete file for the torrent"),
    Penalty("recognizer_error", 1.0, True, "recognition crashed; a human decides"),
    Penalty("files_pending", 0.0, False, "recognized while some files still download; what needs their "
            "bytes (a subtitle's language) is read, and the plan checked again, when they complete"),
    Penalty("content_changed", 0.0, True, "the completed files changed the decision taken while they "
            "downloaded; a human decides again"),
    # the layout preview
    Penalty("folder_inherited", 0.0, False, "the title already has a folder in the library; it is reused"),
    Penalty("folder_id_mismatch", 0.0, True, "the title's existing folder carries another id tag"),
    Penalty("several_title_folders", 0.0, True, "the title has several live folders; merge them first"),
    Penalty("layout_preview", 0.0, True, "the targets cannot be computed"),
    Penalty("unsafe_path", 0.0, True, "a target or source path is unsafe"),
    Penalty("source_missing", 0.0, True, "source files are missing on disk"),
    Penalty("collision", 0.0, True, "a different file already holds a target path"),
    Penalty("target_collision", 0.0, True, "two files of the plan would get the same target"),
    Penalty("unplaced_file", 0.0, True, "a video of the plan has no target"),
    Penalty("better_copy", 0.0, True, "this film or episode is already in the library as another "
            "download's file: keep both, replace it, or skip this copy"),
    Penalty("copy_kept", 0.0, False, "kept beside the copy already in the library, as a Jellyfin version"),
    Penalty("copy_replaced", 0.0, False, "replaces the worse copy already in the library (undo brings "
            "it back)"),
    Penalty("copy_skipped", 0.0, False, "not laid out: the copy already in the library is as good or "
            "better"),
    Penalty("unplaced_track", 0.0, False, "a subtitle, audio or extra file has no target and is left out"),
    # the library's disk (core/storage.py): laid out again by Apply once it is fixed
    *(Penalty(code.value, 0.0, True, STORAGE_MEANINGS[code]) for code in sorted(LIBRARY_CODES)),
)}


def reason(code: str, message: str, scale: float = 1.0) -> Reason:
    """A Reason for `code` from the table, its weight scaled (0..1) by how bad it is."""
    penalty = PENALTIES[code]
    return Reason(code, message, round(penalty.weight * max(0.0, min(scale, 1.0)), 4), penalty.blocking)


def is_blocking(found: Reason) -> bool:
    """Whether a reason stops automatic layout: the table's kind, or the stored flag for unknown codes."""
    penalty = PENALTIES.get(found.code)
    return penalty.blocking if penalty is not None else found.blocking


def blocking(reasons: tuple[Reason, ...] | list[Reason]) -> list[Reason]:
    """The reasons that stop automatic layout."""
    return [r for r in reasons if is_blocking(r)]


def meaning(found: Reason) -> str:
    """What a reason means in general: the table's sentence, else the reason's own message."""
    penalty = PENALTIES.get(found.code)
    return penalty.meaning if penalty is not None else found.message


def in_words(reasons: tuple[Reason, ...] | list[Reason], limit: int = 300) -> str:
    """The blocking reasons (else all), heaviest first, as one line of their meanings, cut at `limit`."""
    shown = blocking(reasons) or list(reasons)
    ordered = sorted(shown, key=lambda r: -r.weight)
    text = "; ".join(dict.fromkeys(meaning(r) for r in ordered))
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
