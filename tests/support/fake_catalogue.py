"""The titles the metadata fakes serve: one `FakeTitle` per film or show, ids per provider.

`default_catalogue()` holds Fargo twice (the 1996 film and the 2014 series), The Matrix and its
sequel, "Метод" / "Method", and three shows that exist as a US and a UK version: Shameless (2011
Showtime / 2004 Channel 4), The Office (2005 NBC / 2001 BBC Two) and House of Cards (2013 Netflix,
a web channel without a country on TVMaze / 1990 BBC One). TVDB names those `Shameless (US)`,
`The Office (UK)`, `House of Cards (1990)` as it does on the real site (`tvdb_name`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

# ISO 3166-1 alpha-2 -> the alpha-3 lowercase code TVDB uses, for the countries in the catalogue.
TVDB_COUNTRY = {"US": "usa", "GB": "gbr", "RU": "rus", "DK": "dnk", "JP": "jpn", "DE": "deu"}
COUNTRY_NAME = {"US": "United States", "GB": "United Kingdom", "RU": "Russian Federation",
                "DK": "Denmark", "JP": "Japan", "DE": "Germany"}


@dataclass
class FakeTitle:
    """One film or show in the fake catalogue (ids per provider; None = that provider lacks it)."""

    media_type: str                          # movie | series
    title: str                               # English title
    year: int
    original_title: str | None = None        # title in the original language, if different
    original_language: str = "en"
    aliases: list[str] = field(default_factory=list)
    seasons: dict[int, int] = field(default_factory=dict)
    tmdb_id: int | None = None
    tvdb_id: int | None = None
    tvmaze_id: int | None = None
    imdb_id: str | None = None
    slug: str = ""
    overview: str = ""
    country: str = "US"                      # ISO 3166-1 alpha-2 origin country
    network: str = ""                        # TV network / web channel; a film's studio
    web: bool = False                        # the network is a streaming service (TVMaze webChannel)
    end_year: int | None = None              # the last air year of a show
    tvdb_name: str | None = None             # TVDB's English name when it differs (`Shameless (US)`)
    translations: dict[str, str] = field(default_factory=dict)   # ISO 639-1 -> translated title
    aired: dict[tuple[int, int], str] = field(default_factory=dict)   # (season, episode) -> ISO air date
    directors: list[str] = field(default_factory=list)            # a film's directors, a show's creators
    cast: list[str] = field(default_factory=list)

    def air_date(self, season: int, episode: int) -> str:
        """The day an episode aired: `aired`'s, else weekly from April 15 of its season's year."""
        start = dt.date(self.year + season - 1, 4, 15)
        return self.aired.get((season, episode)) or (start + dt.timedelta(weeks=episode - 1)).isoformat()

    def episodes(self) -> list[tuple[int, int, str]]:
        """Every (season, episode, air date), in aired order."""
        return [(s, e, self.air_date(s, e)) for s, count in sorted(self.seasons.items())
                for e in range(1, count + 1)]

    def names(self) -> list[str]:
        """Every name a search may match."""
        return [n for n in (self.title, self.original_title, self.tvdb_name, *self.aliases,
                            *self.translations.values()) if n]

    @property
    def primary_name(self) -> str:
        """The name in the original language (TMDB's `original_name`)."""
        return self.original_title or self.title

    @property
    def tvdb_english(self) -> str:
        """TVDB's English name (its `eng` translation)."""
        return self.tvdb_name or self.title

    @property
    def tvdb_primary(self) -> str:
        """TVDB's `name`: the name in the original language, disambiguated like the English one."""
        return self.original_title or self.tvdb_english


class Catalogue:
    """The titles the fakes serve; tests add to it."""

    def __init__(self, titles: list[FakeTitle] | None = None) -> None:
        self.titles: list[FakeTitle] = list(titles or [])

    def add(self, title: FakeTitle) -> FakeTitle:
        """Add a title (visible to every fake using this catalogue)."""
        self.titles.append(title)
        return title

    def search(self, text: str, media_type: str | None = None) -> list[FakeTitle]:
        """Case-insensitive match on any name: exact matches first, then substrings."""
        needle = " ".join(text.split()).casefold()
        exact, partial = [], []
        for t in self.titles:
            if media_type and t.media_type != media_type:
                continue
            names = [n.casefold() for n in t.names()]
            if needle in names:
                exact.append(t)
            elif any(needle in n for n in names):
                partial.append(t)
        return exact + partial

    def by(self, provider: str, ident: str) -> FakeTitle | None:
        """The title with this provider id."""
        for t in self.titles:
            if str(getattr(t, f"{provider}_id")) == ident:
                return t
        return None


def us_uk_pairs() -> list[FakeTitle]:
    """Shameless, The Office and House of Cards, each as its US and its UK show."""
    return [
        FakeTitle("series", "Shameless", 2011, seasons=dict.fromkeys(range(1, 12), 12), tmdb_id=34307,
                  tvdb_id=161511, tvmaze_id=150, imdb_id="tt1586680", slug="shameless-us",
                  network="Showtime", end_year=2021, tvdb_name="Shameless (US)",
                  overview="A Chicago father and his six children.",
                  translations={"ru": "Бесстыжие", "de": "Shameless – Nicht ganz nüchtern"}),
        FakeTitle("series", "Shameless", 2004, seasons=dict.fromkeys(range(1, 12), 10), tmdb_id=1906,
                  tvdb_id=79044, tvmaze_id=1222, imdb_id="tt0377260", slug="shameless",
                  country="GB", network="Channel 4", end_year=2013, tvdb_name="Shameless (UK)",
                  overview="A Manchester father and his six children.",
                  translations={"ru": "Бесстыдники"}),
        FakeTitle("series", "The Office", 2005, seasons={1: 6, 2: 22, 3: 23, 4: 14, 5: 26, 6: 26, 7: 26,
                                                         8: 24, 9: 23},
                  tmdb_id=2316, tvdb_id=73244, tvmaze_id=526, imdb_id="tt0386676", slug="office-us",
                  network="NBC", end_year=2013, tvdb_name="The Office (US)",
                  overview="A mockumentary about a paper company in Scranton.",
                  translations={"ru": "Офис"}),
        FakeTitle("series", "The Office", 2001, seasons={1: 6, 2: 6}, tmdb_id=2996, tvdb_id=78107,
                  tvmaze_id=3, imdb_id="tt0290978", slug="the-office-uk", country="GB",
                  network="BBC Two", end_year=2003, tvdb_name="The Office (UK)",
                  overview="A mockumentary about a paper company in Slough."),
        FakeTitle("series", "House of Cards", 2013, seasons={1: 13, 2: 13, 3: 13, 4: 13, 5: 13, 6: 8},
                  tmdb_id=1425, tvdb_id=262980, tvmaze_id=175, imdb_id="tt1856010",
                  slug="house-of-cards-us", network="Netflix", web=True, end_year=2018,
                  tvdb_name="House of Cards (US)", overview="A congressman schemes his way to power.",
                  translations={"ru": "Карточный домик"}),
        FakeTitle("series", "House of Cards", 1990, seasons={1: 4}, tmdb_id=10134, tvdb_id=76947,
                  tvmaze_id=3390, imdb_id="tt0098825", slug="house-of-cards", country="GB",
                  network="BBC One", end_year=1990, tvdb_name="House of Cards (1990)",
                  overview="A chief whip schemes his way to power."),
    ]


def numbering_shows() -> list[FakeTitle]:
    """Two daily shows (one numbered by year, one by season) and a show long enough for absolute numbers.

    TVDB numbers `Evening Show` by year, as it does most talk shows: 2019-03-11 is S2019E02.
    `Late Report` numbers by season: 2019-03-11 is S03E10. `Long Saga` has seasons of 12, 12
    and 24 episodes: absolute 30 is S03E06.
    """
    return [
        FakeTitle("series", "Evening Show", 2015, seasons={2018: 3, 2019: 3}, tmdb_id=5501, tvdb_id=5502,
                  tvmaze_id=5503, imdb_id="tt5500001", slug="evening-show", network="NBC",
                  aired={(2018, 1): "2018-12-20", (2018, 2): "2018-12-21", (2018, 3): "2018-12-24",
                         (2019, 1): "2019-03-08", (2019, 2): "2019-03-11", (2019, 3): "2019-03-12"}),
        FakeTitle("series", "Late Report", 2017, seasons={1: 4, 2: 4, 3: 12}, tmdb_id=5601, tvdb_id=5602,
                  tvmaze_id=5603, imdb_id="tt5600001", slug="late-report", network="CBS",
                  aired={(3, 1): "2019-01-07", (3, 10): "2019-03-11", (3, 11): "2019-03-12"},
                  directors=["Ann Creator"], cast=["Bob Anchor"]),
        FakeTitle("series", "Long Saga", 2010, seasons={1: 12, 2: 12, 3: 24}, tmdb_id=5701, tvdb_id=5702,
                  tvmaze_id=5703, imdb_id="tt5700001", slug="long-saga", network="ZDF", country="DE"),
    ]


def default_catalogue() -> Catalogue:
    """Fargo twice (film and series), The Matrix (and a sequel), a Cyrillic-titled show, US/UK pairs."""
    return Catalogue([
        FakeTitle("movie", "The Matrix", 1999, tmdb_id=603, imdb_id="tt0133093", slug="the-matrix",
                  overview="A hacker learns what the Matrix is.", network="Warner Bros. Pictures",
                  translations={"ru": "Матрица"}),
        FakeTitle("movie", "The Matrix Reloaded", 2003, tmdb_id=604, imdb_id="tt0234215",
                  slug="the-matrix-reloaded", overview="Neo and the rebels fight on.",
                  network="Warner Bros. Pictures"),
        FakeTitle("movie", "Fargo", 1996, tmdb_id=275, imdb_id="tt0116282", slug="fargo-1996",
                  overview="A car salesman hires two criminals.", network="PolyGram Filmed Entertainment"),
        FakeTitle("series", "Fargo", 2014, seasons={1: 10, 2: 10, 3: 10, 4: 11, 5: 10}, tmdb_id=60622,
                  tvdb_id=269613, tvmaze_id=1006, imdb_id="tt2802850", slug="fargo",
                  overview="An anthology of crime stories in the Midwest.", network="FX"),
        FakeTitle("series", "Method", 2015, original_title="Метод", original_language="ru",
                  aliases=["The Method"], seasons={1: 16, 2: 16}, tmdb_id=65708, tvdb_id=300241,
                  tvmaze_id=8137, imdb_id="tt4733812", slug="metod", country="RU", network="Channel One",
                  end_year=2021, overview="A detective hunts serial killers."),
        *us_uk_pairs(),
    ])
