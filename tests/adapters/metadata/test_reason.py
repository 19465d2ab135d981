"""A provider's own words for a refusal (TVDB's `message`, TMDB's `status_message`) travel into
health lines and logs (`adapters/metadata/base.py: provider_reason`): whatever a server sends, one line
of printable text, bounded, and nothing when the body is not a JSON object that names a reason."""

from __future__ import annotations

from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from jellybit.adapters.metadata.base import REASON_CHARS, provider_reason

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8)


@given(body=st.one_of(json_values, st.fixed_dictionaries({"message": st.text()}),
                      st.fixed_dictionaries({"status_message": st.text(max_size=400)})))
def test_a_providers_reason_is_short_printable_text_whatever_it_sent(body: Any) -> None:
    said = provider_reason(httpx.Response(401, json=body))
    assert len(said) <= REASON_CHARS
    assert said.isprintable()
    assert said == " ".join(said.split())
    if not isinstance(body, dict):
        assert said == ""


def test_the_reasons_tvdb_and_tmdb_really_send_and_a_body_that_is_not_json() -> None:
    tvdb = {"status": "failure", "message": "InvalidAPIKey: apikey invalid", "data": None}
    tmdb = {"status_code": 7, "status_message": "Invalid API key: You must be granted a valid key.",
            "success": False}
    assert provider_reason(httpx.Response(401, json=tvdb)) == "InvalidAPIKey: apikey invalid"
    assert provider_reason(httpx.Response(401, json=tmdb)) == tmdb["status_message"]
    assert provider_reason(httpx.Response(401, content=b"<html>Unauthorized</html>")) == ""
    assert provider_reason(httpx.Response(401, content=b"")) == ""
    long = provider_reason(httpx.Response(400, json={"message": "pin required " * 40}))
    assert len(long) == REASON_CHARS
    assert long.endswith("…")
