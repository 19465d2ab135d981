"""Reading chat messages (untrusted text): sources, context, commands, button data; and the access gate."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.identity import parse_source
from jellybit.errors import InvalidSource
from jellybit.transports.telegram.access import Gate, Verdict
from jellybit.transports.telegram.text import (
    Action,
    Press,
    decode_press,
    encode_press,
    extract,
    is_torrent_url,
    parse_command,
)

ID = "01jbz9x8k4m3n2p1q0r9s8t7v6"
OTHER = "01jbz9x8k4m3n2p1q0r9s8t7v7"
HEX40 = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(("text", "sources", "context"), [
    (f"magnet:?xt=urn:btih:{HEX40}&dn=Fargo второй сезон", (f"magnet:?xt=urn:btih:{HEX40}&dn=Fargo",),
     "второй сезон"),
    ("(see https://t.example/a/Show.S01.torrent).", ("https://t.example/a/Show.S01.torrent",), "(see)."),
    ("https://t.example/page?id=1 is the page, not a torrent", (),
     "https://t.example/page?id=1 is the page, not a torrent"),
    (f"{HEX40.upper()}, the Danish one", (HEX40,), "the Danish one"),
    (f"https://t.example/details?h={HEX40}", (), f"https://t.example/details?h={HEX40}"),
    (f"x{HEX40}", (), f"x{HEX40}"),
    (f"magnet:?xt=urn:btih:{HEX40} and again magnet:?xt=urn:btih:{HEX40}", (f"magnet:?xt=urn:btih:{HEX40}",),
     "and again"),
    ("HTTPS://T.EXAMPLE/X.TORRENT?passkey=1 — фильм", ("HTTPS://T.EXAMPLE/X.TORRENT?passkey=1",), "фильм"),
    ("", (), ""),
])
def test_sources_and_context(text: str, sources: tuple[str, ...], context: str) -> None:
    """Magnets, .torrent links and bare hashes are sources; other links and words stay as context."""
    found = extract(text)
    assert found.sources == sources
    assert found.context == context


def test_hidden_links_count_when_they_are_torrents() -> None:
    """A text_link's target is a source when it is a magnet or a .torrent link; its words stay."""
    found = extract("Download here, season 2", ["https://t.example/dl/7.torrent", "https://t.example/about",
                                                f"magnet:?xt=urn:btih:{HEX40}"])
    assert found.sources == ("https://t.example/dl/7.torrent", f"magnet:?xt=urn:btih:{HEX40}")
    assert found.context == "Download here, season 2"


def test_a_torrent_url_is_judged_by_its_path() -> None:
    """Only http(s) URLs whose path ends in .torrent."""
    assert is_torrent_url("https://x.example/a.torrent?k=1")
    assert not is_torrent_url("https://x.example/a.torrent.html")
    assert not is_torrent_url("ftp://x.example/a.torrent")
    assert not is_torrent_url("https://[::1/a.torrent")


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)
PIECES = st.lists(st.one_of(
    TEXT,
    st.just(f"magnet:?xt=urn:btih:{HEX40}"),
    st.just("https://t.example/a.torrent"),
    st.just(HEX40),
    st.sampled_from(["второй сезон", "(", ")", ".", "—", "\n", " "]),
), max_size=12)


@given(PIECES)
def test_extract_never_fails_and_keeps_sources_out_of_the_context(pieces: list[str]) -> None:
    """Any text: sources are unique, look like sources, and none is left inside the context."""
    text = " ".join(pieces)
    found = extract(text)
    assert len(set(found.sources)) == len(found.sources)
    for source in found.sources:
        assert source in text or source.upper() in text.upper()
        assert source.lower().startswith(("magnet:?", "http://", "https://")) or len(source) in (40, 64)
        try:
            parse_source(source)
        except InvalidSource:
            assert source.lower().startswith("magnet:?")   # a malformed magnet is refused by ingest
        if not source.lower().startswith("magnet:?"):
            assert source not in found.context
    assert found.context == found.context.strip()


@given(TEXT)
def test_every_source_in_arbitrary_text_is_refused_or_accepted_cleanly(text: str) -> None:
    """Whatever extract calls a source, ingest's parser either accepts or refuses with InvalidSource."""
    for source in extract(text).sources:
        try:
            parse_source(source)
        except InvalidSource:
            pass


def test_commands() -> None:
    """`/name@bot args`; another bot's command in a group is not ours."""
    assert parse_command("/undo 01ABC", "jellybit_bot").name == "undo"
    assert parse_command("/undo 01ABC", "jellybit_bot").args == "01ABC"
    assert parse_command("/LIST@Jellybit_Bot", "jellybit_bot").name == "list"
    assert parse_command("/list@other_bot", "jellybit_bot") is None
    assert parse_command("not /a command", None) is None
    assert parse_command("/", None) is None


def test_button_data_round_trips_and_fits() -> None:
    """Every press encodes under 64 bytes and decodes to itself."""
    for action in Action:
        press = Press(action, ID, OTHER if action is Action.CANDIDATE else None)
        data = encode_press(press)
        assert len(data.encode()) <= 64
        assert decode_press(data) == press


@given(st.text(max_size=80))
def test_forged_button_data_is_refused(data: str) -> None:
    """Callback data a client made up decodes to nothing, or to a well-formed press."""
    press = decode_press(data)
    if press is not None:
        assert encode_press(press) == data
    assert decode_press(f"a:{ID}:{OTHER}") is None
    assert decode_press(f"c:{ID}") is None
    assert decode_press("a:../../etc") is None


def test_the_gate_is_fail_closed_and_rate_limits() -> None:
    """Empty allow-list = nobody; a stranger is refused once; a user over the rate is told once."""
    now = [0.0]
    gate = Gate([], 60, clock=lambda: now[0])
    assert gate.check(1) is Verdict.REFUSE
    assert gate.check(1) is Verdict.DENY
    assert gate.check(None) is Verdict.DROP
    gate = Gate([7], 2, clock=lambda: now[0])
    verdicts = [gate.check(7) for _ in range(4)]
    assert verdicts == [Verdict.SERVE, Verdict.SERVE, Verdict.SLOW_DOWN, Verdict.DROP]
    now[0] += 30.0                                    # one token back (2 per minute)
    assert gate.check(7) is Verdict.SERVE
    assert gate.check(7) is Verdict.SLOW_DOWN         # a new over-rate stretch is told again
    assert gate.check(8) is Verdict.REFUSE
