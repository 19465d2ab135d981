"""Jellybit's corrections to guessit's reading of a release name: one named function each, in order.

Each correction edits the working reading (`common.Reading`) in place and notes its name in
`reading["corrections"]` when it changed something. `CORRECTIONS` is the registry: the parser
applies them in this order, `bench/parse_accuracy.py` switches each off in turn to count the corpus
cases it fixes and breaks, and `docs/recognition.md` documents every one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from jellybit.core.release_fixes import (
    doubts,
    fansub,
    numbers,
    pairs,
    parts,
    paths,
    stray,
    title_fixes,
    words,
    world,
)
from jellybit.core.release_fixes.common import Guess, Reading, base_name, reading_of

__all__ = ["CORRECTIONS", "Correction", "Guess", "Reading", "apply_all", "base_name", "reading_of"]

_COMPLETE = re.compile(r"(?i)\bcomplete\b|\bполный сериал\b|\bвсе сезоны\b|全集")
_BATCH = re.compile(r"(?i)\bbatch\b|全集")


@dataclass(frozen=True)
class Correction:
    """One named correction: its function, and (from its docstring) the failure it fixes."""

    name: str
    fix: Callable[[Reading, Guess], None]

    @property
    def summary(self) -> str:
        """The first line of the function's docstring."""
        return (self.fix.__doc__ or "").strip().splitlines()[0]


def _named(*functions: Callable[[Reading, Guess], None]) -> tuple[Correction, ...]:
    return tuple(Correction(f.__name__.removeprefix("fix_"), f) for f in functions)


CORRECTIONS: tuple[Correction, ...] = _named(
    title_fixes.fix_site_prefix,
    numbers.fix_year_in_title,
    numbers.fix_absolute_number,
    numbers.fix_season_year,
    numbers.fix_year_as_title,
    title_fixes.fix_group_prefix,
    numbers.fix_file_numbering,
    numbers.fix_disc_part,
    numbers.fix_cross_numbering,
    fansub.fix_leading_group,
    fansub.fix_bracketed_fansub,
    title_fixes.fix_alias,
    fansub.fix_fansub_season,
    numbers.fix_absolute_range,
    fansub.fix_special,
    numbers.fix_chapter,
    title_fixes.fix_part_in_title,
    title_fixes.fix_language_in_title,
    title_fixes.fix_decimal_title,
    fansub.fix_dash_number,
    numbers.fix_glued_numbering,
    numbers.fix_dash_absolute,
    fansub.fix_dash_field,
    fansub.fix_volumes,
    fansub.fix_fansub_tail,
    numbers.fix_scene_pair,
    numbers.fix_extras_number,
    pairs.fix_trailing_pair,
    pairs.fix_dotted_pair,
    words.fix_episode_word,
    words.fix_season_word,
    words.fix_broadcast_date,
    words.fix_tracker_year,
    words.fix_date_forms,
    numbers.fix_number_in_title,
    numbers.fix_season_range,
    numbers.fix_spanish_cap,
    numbers.fix_part_episode,
    numbers.fix_episode_range,
    stray.fix_title_episode,
    stray.fix_part_count,
    numbers.fix_absolute_beside,
    numbers.fix_seasonless_episode,
    parts.fix_series_part,
    fansub.fix_title_number,
    world.fix_cjk_fansub,
    world.fix_cjk_numbers,
    world.fix_bracket_number,
    world.fix_date_led,
    world.fix_episode_words,
    world.fix_day_month,
    world.fix_dated_numbers,
    world.fix_tracker_tail,
    world.fix_x_range,
    world.fix_batch_span,
    world.fix_cap_absolute,
    world.fix_work_words,
    world.fix_title_marks,
    title_fixes.fix_script_titles,
    title_fixes.fix_title_words,
    paths.fix_file_episodes,
    doubts.fix_ambiguous_numbers,
)


def _flags(r: Reading) -> None:
    """The complete/batch/special flags the media type is decided from (not a correction)."""
    text = r["text"]
    r["complete"] = "Complete" in r["other"] or bool(_COMPLETE.search(text))
    r["batch"] = r.get("batch", False) or bool(_BATCH.search(text))
    r["special"] = r.get("special", False) or r["seasons"] == [0]


def apply_all(reading: Reading, guess: Guess, disabled: frozenset[str] = frozenset()) -> Reading:
    """Apply every correction not in `disabled`, in order, to a copy of guessit's reading."""
    r = {k: list(v) if isinstance(v, list) else v for k, v in reading.items()}
    r.setdefault("batch", False)
    r.setdefault("special", False)
    r.setdefault("complete", False)
    for correction in CORRECTIONS:
        if correction.name not in disabled:
            correction.fix(r, guess)
    _flags(r)
    return r
