"""The downloads page in a real headless Chromium while a season pack arrives file by file (issue 25):
a real worker and panel, a real qbittorrent-nox downloading the pack from a second one over loopback,
fake TMDB/TVDB/TVMaze. Some episodes are in the library while the rest still downloads, and the
page says so; at the end every episode is there and the download is done."""

from __future__ import annotations

import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.support.fake_http import running
from tests.support.fake_metadata import FakeTmdb, FakeTvdb, FakeTvmaze, default_catalogue
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import wait_for
from tests.support.qbittorrent_pair import QbittorrentPair
from tests.support.services import require_binary
from tests.ui.stack import PosterServer, Stack
from tests.ui.test_browser import CHROMIUM_ARGS, DESKTOP, TIMEOUT, check_page, new_page, shoot, upload_and_add

EPISODES = 6
NAME = "Fargo.2014.S01.1080p.WEB-DL"
LIMIT = 400_000          # bytes/s: an episode about every 1.5 s


@pytest.fixture(scope="module")
def stack(mosquitto: Broker, qbittorrent_pair: QbittorrentPair) -> Iterator[Stack]:
    """The worker and the panel as processes over the pair's leecher; stopped after the module."""
    qbittorrent_pair.start()
    leecher = qbittorrent_pair.leecher
    root = Path(tempfile.mkdtemp(prefix="jellybit-ui-early-"))
    data = Path(tempfile.mkdtemp(prefix="ui-", dir=leecher.data_root))
    posters = PosterServer()
    posters.start()
    catalogue = default_catalogue()
    with running(FakeTmdb(catalogue)) as tmdb, running(FakeTvdb(catalogue)) as tvdb, \
            running(FakeTvmaze(catalogue)) as tvmaze:
        tvdb.image_host = tvmaze.image_host = posters.base_url
        stack = Stack(root, broker_url=mosquitto.url, base_topic=f"jbue-{secrets.token_hex(4)}",
                      qbittorrent=leecher, data_dir=data, tmdb=tmdb, tvdb=tvdb, tvmaze=tvmaze,
                      posters=posters)
        try:
            stack.start()
            yield stack
        finally:
            stack.stop()
            posters.stop()
            qbittorrent_pair.reset()
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless."""
    chromium = require_binary("chromium")
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A desktop-sized page."""
    page = new_page(browser, DESKTOP)
    yield page
    page.context.close()


def test_the_downloads_page_shows_episodes_in_the_library_while_the_rest_downloads(
    stack: Stack, qbittorrent_pair: QbittorrentPair, page: Page,
) -> None:
    pair = qbittorrent_pair
    files = {f"Fargo.2014.S01E{n:02d}.1080p.WEB-DL.mkv": 500_000 for n in range(1, EPISODES + 1)}
    torrent = pair.seed(NAME, files)
    upload_and_add(page, stack, torrent.torrent, "fargo", "Fargo, the series, season 1")
    pair.wait_listed(torrent)
    pair.pace(torrent, limit=LIMIT)
    pair.connect(torrent)

    page.goto(stack.url)
    card = page.locator("[data-download]").filter(has_text="Fargo")
    in_library = card.get_by_test_id("in-library")
    expect(in_library).to_contain_text(re.compile(r"[1-5] files? in the library already, the rest still "
                                                  "downloading"), timeout=TIMEOUT * 2)
    # At that moment qBittorrent still downloads the rest, and the episodes named are really there.
    info = pair.torrent(torrent)
    assert info is not None
    assert info["progress"] < 1
    laid = list(stack.series.rglob("*.mkv"))
    assert 1 <= len(laid) < EPISODES
    expect(card.get_by_test_id("progress")).to_be_visible()
    shoot(page, "downloads-early-layout-desktop")
    check_page(page)

    wait_for(lambda: len(list(stack.series.rglob("*.mkv"))) == EPISODES, timeout=90)
    expect(card.locator("[data-state]")).to_have_text(re.compile("Done"), timeout=TIMEOUT * 2)
    expect(in_library).to_have_count(0)
