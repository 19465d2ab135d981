"""paho's socket errors while a broker goes away are warnings; a traceback keeps its level."""

from __future__ import annotations

import logging

import pytest

from jellybit.client import PAHO_LOG


def test_paho_socket_errors_are_warnings_but_tracebacks_stay_errors(caplog: pytest.LogCaptureFixture) -> None:
    """A dropped broker is expected (clients reconnect and say so); a failing callback is not."""
    caplog.set_level(logging.DEBUG, logger="mqtt")
    PAHO_LOG.log(logging.ERROR, "failed to receive on socket: %s", "[Errno 32] Broken pipe")
    try:
        raise ValueError("a callback failed")
    except ValueError:
        PAHO_LOG.exception("on_message raised")
    PAHO_LOG.log(logging.DEBUG, "Sending PINGREQ")
    levels = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "mqtt"]
    assert levels == [(logging.WARNING, "failed to receive on socket: [Errno 32] Broken pipe"),
                      (logging.ERROR, "on_message raised"), (logging.DEBUG, "Sending PINGREQ")]
