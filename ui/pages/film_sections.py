"""A movie pack on the download page: one card per film, each with its own match, reasons and candidates;
the unsure films are decided one by one and Apply pins each decided film."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from nicegui import ui

from jellybit.protocol import CandidatePayload, FilmPayload, RecognitionDetail
from ui import format as fmt
from ui import review
from ui.frame import WRAP
from ui.pages import review_sections
from ui.pages.detail_sections import section


def preselected(recognition: RecognitionDetail | None) -> dict[str, str]:
    """Each film's pick when the page opens: the candidate the worker matched it to."""
    picks: dict[str, str] = {}
    for film in recognition.films if recognition else []:
        chosen = next((c for c in recognition.candidates if c.film == film.key and c.chosen), None)
        if chosen is not None:
            picks[film.key] = review.candidate_key(chosen)
    return picks


def pins(recognition: RecognitionDetail | None, choices: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """`overrides.files` pinning every unsure film the human decided to the candidate chosen for it."""
    found: dict[str, dict[str, Any]] = {}
    for film in recognition.films if recognition else []:
        if film.confirmed or film.key not in choices:
            continue
        candidate = next((c for c in recognition.candidates if c.film == film.key
                          and review.candidate_key(c) == choices[film.key]), None)
        if candidate is None:
            continue
        for source in film.sources:
            found[source] = {"provider": str(candidate.provider), "provider_id": candidate.provider_id}
    return found


def films(recognition: RecognitionDetail, choices: Mapping[str, str],
          choose: Callable[[FilmPayload, CandidatePayload], None], apply: Callable[[ui.button], Any], *,
          can_choose: bool) -> None:
    """One card per film: the sure ones say what they are, the unsure ones offer their candidates."""
    unsure = sum(1 for f in recognition.films if not f.confirmed)
    title = f"Films ({len(recognition.films)}; {unsure} to decide)" if unsure else \
        f"Films ({len(recognition.films)}, all matched)"
    with section(title):
        ui.label("Each film was matched on its own. Choose what each unsure film is; Apply lays out every "
                 "film in its own folder.").classes("text-sm text-muted").style(WRAP)
        for film in recognition.films:
            _film(film, recognition, choices.get(film.key), choose, apply, can_choose=can_choose)


def _film(film: FilmPayload, recognition: RecognitionDetail, selected: str | None,
          choose: Callable[[FilmPayload, CandidatePayload], None], apply: Callable[[ui.button], Any], *,
          can_choose: bool) -> None:
    read = fmt.title_line(film.title, film.year)
    matched = fmt.title_line(film.match_title, film.match_year) if film.match_title else "no match"
    with ui.card().classes("w-full gap-2 p-3").props(
            f"flat bordered data-film='{_attr(film.key)}' "
            f"data-confirmed={'true' if film.confirmed else 'false'}"):
        with ui.row().classes("items-center gap-2"):
            ui.label(f"{read} → {matched}").classes("text-subtitle1 font-medium").style(WRAP)
            ui.badge("Matched" if film.confirmed else "Needs you",
                     color="green-9" if film.confirmed else "deep-orange-10").props("data-testid=film-state")
            if film.confidence is not None:
                ui.label(f"match score {fmt.percent(film.confidence)}").classes("text-xs text-muted")
        ui.label(", ".join(film.sources)).classes("text-xs text-muted").style(WRAP)
        for reason in review.ordered_reasons(film.reasons):
            words, _ = review.reason_words(reason)
            ui.label(f"{'Blocks' if reason.blocking else 'Note'}: {words}").classes("text-sm").style(WRAP)
        if film.confirmed or not can_choose:
            return
        offered = [c for c in recognition.candidates if c.film == film.key]
        if not offered:
            ui.label("No candidate: correct the file's film in the table below, or add a hint.").classes(
                "text-sm text-muted")
        for item in offered:
            review_sections.candidate_card(item, review.candidate_key(item), selected,
                                           recognition.recommended, lambda it, f=film: choose(f, it), apply,
                                           can_choose=can_choose)


def _attr(text: str) -> str:
    return text.replace("'", "’").replace('"', "”")
