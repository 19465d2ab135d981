"""The provider table is the one place a provider is described: a row added there is named, linked,
ordered, tagged and read by every face and rule, with nothing else to edit."""

from __future__ import annotations

import ast
from pathlib import Path
from types import MappingProxyType

import pytest

from jellybit import present, protocol
from jellybit.cli.show import pages
from jellybit.core import providers
from jellybit.core.context import read_context
from jellybit.core.jellyfin import Item, Wanted, pick
from jellybit.core.names import id_tag
from jellybit.core.numbering import read_overrides
from jellybit.core.providers import PROVIDERS, Provider, ProviderFacts
from jellybit.core.records import Candidate, MediaType, Work
from jellybit.core.works import listing_ids

ROOT = Path(__file__).resolve().parents[2]

ANIDB = ProviderFacts(
    "anidb", "AniDB", frozenset({MediaType.SERIES}),      # type: ignore[arg-type]  (not a Provider member)
    pages=MappingProxyType({None: "https://anidb.net/anime/{id}"}),
    folder_tags=MappingProxyType({MediaType.SERIES: "anidbid"}),
    rank=MappingProxyType({MediaType.SERIES: 3, MediaType.MOVIE: 3}),
    off_hint="set metadata.anidb.enabled = true", words=("anidb",), jellyfin_key="anidb",
)


@pytest.fixture
def anidb(monkeypatch: pytest.MonkeyPatch) -> str:
    """AniDB added to the table (a row, nothing else), for the length of one test."""
    monkeypatch.setitem(providers._TABLE, "anidb", ANIDB)
    return "anidb"


def test_every_provider_has_a_row_and_the_table_is_read_only() -> None:
    """Each Provider member is described once; code reads the table and cannot change it."""
    assert set(PROVIDERS) == {p.value for p in Provider}
    assert all(PROVIDERS[p].provider is p for p in Provider)
    with pytest.raises(TypeError):
        PROVIDERS["x"] = ANIDB                               # type: ignore[index]
    assert providers.searched() == ("tmdb", "tvdb", "tvmaze")        # IMDb only gives ids
    assert providers.preferred(MediaType.SERIES) == ("tvdb", "tmdb", "tvmaze")
    assert providers.preferred(MediaType.MOVIE) == ("tmdb", "tvdb", "tvmaze")
    # A film is not searched at the series-only providers; an unknown kind (or none) searches them all.
    assert [p for p in providers.searched() if providers.serves(p, "movie")] == ["tmdb"]
    assert all(providers.serves(p, kind) for p in providers.searched() for kind in ("series", None, "anime"))


def test_the_faces_name_link_and_order_the_known_providers() -> None:
    """The CLI and the panel (through the protocol) say TMDB, TVDB, TVMaze, IMDb, in that order."""
    item = protocol.CandidatePayload(
        provider=Provider.TVMAZE, provider_id="82", title="Game of Thrones", url="https://www.tvmaze.com/shows/82",
        links={"imdb": "https://www.imdb.com/title/tt0944947/", "tvdb": "https://thetvdb.com/series/x"})
    assert [name for name, _ in pages(item)] == ["TVDB", "TVMaze", "IMDb"]
    assert protocol.provider_name("tvmaze") == "TVMaze"
    assert protocol.provider_name("somewhere") == "somewhere"
    assert protocol.page_url("tmdb", "603", MediaType.MOVIE) == "https://www.themoviedb.org/movie/603"
    assert protocol.page_url("tmdb", "1399", MediaType.SERIES) == "https://www.themoviedb.org/tv/1399"


def test_a_row_is_all_a_new_provider_needs(anidb: str) -> None:
    """Added to the table only, AniDB is named, linked, ordered, tagged, matched in Jellyfin and read."""
    # The faces: the panel and the CLI name and link it (through the protocol), listing it last.
    assert protocol.provider_name(anidb) == "AniDB"
    assert present.provider_name(anidb) == "AniDB"            # the faces' one place for words
    assert protocol.page_url(anidb, "69", MediaType.SERIES) == "https://anidb.net/anime/69"
    item = protocol.CandidatePayload.model_construct(
        provider=anidb, provider_id="69", title="One Piece", url=None, links={
            anidb: "https://anidb.net/anime/69", "tmdb": "https://www.themoviedb.org/tv/37854"})
    assert pages(item) == [("TMDB", "https://www.themoviedb.org/tv/37854"), ("AniDB", "https://anidb.net/anime/69")]
    assert protocol.provider_order([anidb, "imdb", "tmdb"]) == ["tmdb", "imdb", anidb]
    # The core rules: searched for series, its folder tag, its ids, its word in free text, Jellyfin's key.
    assert anidb in providers.searched()
    assert providers.preferred(MediaType.SERIES)[-1] == anidb
    assert not providers.serves(anidb, MediaType.MOVIE)
    assert id_tag(Work(MediaType.SERIES, "One Piece", 1999, anidb, "69")) == "[anidbid-69]"
    assert id_tag(Work(MediaType.MOVIE, "One Piece", 1999, anidb, "69")) is None   # no movie tag
    reading = read_context("this is anidb 69, please")
    assert (reading.provider, reading.provider_id, reading.provider_kind) == (anidb, "69", "series")
    assert read_overrides({"provider": anidb, "provider_id": "69"}).provider == anidb
    found = pick([Item("i1", "One Piece", "Series", "/elsewhere", {"anidb": "69"})],
                 Wanted("d1", "series", "/lib/One Piece", provider=anidb, provider_id="69"))
    assert found is not None
    assert found.item_id == "i1"


def test_listing_ids_follow_the_table_order(anidb: str) -> None:
    """A merged work's ids are listed in the table's order, unknown ids after them."""
    candidate = Candidate(provider=anidb, provider_id="69", title="One Piece", media_type=MediaType.SERIES,
                          details={"external_ids": {"zzz": "5", "tvdb": "81797", "imdb": "tt0388629"}})
    assert list(listing_ids(candidate)) == ["tvdb", "imdb", anidb, "zzz"]


# Where a provider's key may still be written as a literal: the table, its config section and adapter.
_ALLOWED = {"jellybit/core/providers.py", "jellybit/config/__init__.py", "jellybit/config/sections.py"}
_ADAPTERS = "jellybit/adapters/metadata/"


def test_no_other_module_restates_a_provider() -> None:
    """'tvdb' and 'tvmaze' (words with no other meaning here) appear as literals only where the table,
    the config sections and the adapters live: every other module reads the table."""
    found = []
    for path in sorted([*ROOT.joinpath("jellybit").rglob("*.py"), *ROOT.joinpath("ui").rglob("*.py")]):
        name = path.relative_to(ROOT).as_posix()
        if name in _ALLOWED or name.startswith(_ADAPTERS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.strip().lower() in {"tvdb", "tvmaze", "themoviedb", "thetvdb"}:
                found.append(f"{name}:{node.lineno} {node.value!r}")
    assert not found, found
