"""The presentation part: what every face (the panel, the CLI, Telegram, Home Assistant) says and offers.

It reads only the protocol, so each face can use it: the words (state and provider names, the one-line
title, reasons in order with their meanings, the verdict, which library files are live, an outside
service's health in a line) and which actions a download's state allows, derived from
`COMMAND_STATES`, the table the engine enforces.
"""

from jellybit.present.actions import ACTIONS, actions, allowed, states_for
from jellybit.present.verdict import Verdict, verdict, verdict_line
from jellybit.present.words import (
    LIVE_LINKS,
    STATE_NAMES,
    count,
    is_live,
    ordered_reasons,
    pages,
    reason_words,
    sentence,
    service_detail,
    service_heading,
    service_line,
    service_state,
    state_name,
    title_line,
)
from jellybit.protocol import provider_name  # the provider table's words (core/providers.py)

__all__ = [
    "ACTIONS", "LIVE_LINKS", "STATE_NAMES", "Verdict", "actions", "allowed", "count",
    "is_live", "ordered_reasons", "pages", "provider_name", "reason_words", "sentence", "service_detail",
    "service_heading", "service_line", "service_state", "state_name", "states_for", "title_line", "verdict",
    "verdict_line",
]
