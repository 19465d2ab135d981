"""Finding real service binaries: a missing one skips locally and fails in CI."""

from __future__ import annotations

import os
import shutil
import socket
from typing import NoReturn

import pytest


def in_ci() -> bool:
    """Tell whether we run under CI (where a missing service is a failure)."""
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def unavailable(message: str) -> NoReturn:
    """A service the test needs is missing: skip the test locally, fail it in CI."""
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


def require_binary(name: str) -> str:
    """Return the path of a binary; skip the test locally, fail it in CI, when it is missing."""
    path = shutil.which(name)
    if path is None:
        unavailable(f"{name} is not installed (bash .ci/run installs it)")
    return path


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
