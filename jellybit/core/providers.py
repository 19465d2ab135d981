"""The metadata providers a match, a candidate or an override may name."""

from __future__ import annotations

from enum import StrEnum


class Provider(StrEnum):
    """A metadata provider (IMDb ids come as links and overrides; it is not searched)."""

    TMDB = "tmdb"
    TVDB = "tvdb"
    TVMAZE = "tvmaze"
    IMDB = "imdb"
