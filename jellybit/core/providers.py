"""The metadata providers a match, a candidate or an override may name."""

from __future__ import annotations

from enum import StrEnum


class Provider(StrEnum):
    """A metadata provider (IMDb ids come as links and overrides; it is not searched)."""

    TMDB = "tmdb"
    TVDB = "tvdb"
    TVMAZE = "tvmaze"
    IMDB = "imdb"


TMDB_KEY_PAGE = "https://www.themoviedb.org/settings/api"
# Said wherever a film meets a configuration without TMDB (the review, `recognize`, the health check).
FILMS_NEED_TMDB = (f"films need a TMDB key: get one at {TMDB_KEY_PAGE} and set "
                   "JELLYBIT_METADATA_TMDB_API_KEY (or metadata.tmdb.api_key)")
