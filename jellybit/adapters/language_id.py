"""Language identification of subtitle text with py3langid, restricted to the languages Jellybit names.

Why py3langid (bench/subtitle_language.py has the numbers): of the detectors measured on short
subtitle cues it was the only one that never named a wrong language, on one cue or on eight;
it is maintained, deterministic and a pure-Python wheel (its one dependency, numpy, has wheels
for every platform the Docker image runs on). Its model is loaded once per process, lazily, so a
worker that never meets an untagged subtitle never pays for it (about 1 s and 90 MB).
The call sits in an adapter, not in `core/`, because core imports only the standard library:
the detector is a third-party model loaded from disk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jellybit.core.languages import LANGUAGE_TABLE
from jellybit.errors import AdapterError

CONFIDENCE = 0.90            # the detector's normalized probability needed to accept a language
GUESSED_CONFIDENCE = 0.97    # ... when the text's encoding was itself a guess (cp1251 / cp1252)
MIN_LETTERS = 12             # fewer letters than this: not enough text to tell
MAX_CHARS = 20_000           # the detector reads at most this much text
LANGUAGES = tuple(code for code, _ in LANGUAGE_TABLE)
SYSTEM = "language detection"

_lock = threading.Lock()
_models: dict[frozenset[str], Any] = {}


@dataclass(frozen=True)
class Detection:
    """The best language for a text and the detector's confidence in it (None: too little text)."""

    language: str | None
    confidence: float


def _model(languages: frozenset[str]) -> Any:
    with _lock:
        model = _models.get(languages)
        if model is None:
            try:
                from py3langid.langid import MODEL_FILE
                from py3langid.langid import LanguageIdentifier as Model

                model = Model.from_model_file(MODEL_FILE, norm_probs=True)
                model.set_languages(sorted(languages & set(model.nb_classes)))
            except Exception as exc:          # a missing wheel or a damaged model file
                raise AdapterError(SYSTEM, f"cannot load py3langid: {exc}") from exc
            _models[languages] = model
        return model


class LanguageIdentifier:
    """Detects the language of a text among a fixed set (by default every language Jellybit names)."""

    def __init__(self, languages: Iterable[str] = LANGUAGES) -> None:
        self._languages = frozenset(languages)

    def detect(self, text: str) -> Detection:
        """The most likely language and its probability; raises AdapterError if the model is missing."""
        sample = text[:MAX_CHARS]
        if sum(1 for ch in sample if ch.isalpha()) < MIN_LETTERS:
            return Detection(None, 0.0)
        model = _model(self._languages)
        try:
            code, score = model.classify(sample)
        except Exception as exc:
            raise AdapterError(SYSTEM, f"{type(exc).__name__}: {exc}") from exc
        return Detection(str(code), round(float(score), 4))
