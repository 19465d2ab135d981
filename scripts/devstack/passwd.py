"""mosquitto's password file, written without mosquitto_passwd (standard library only, so
scripts/compose-setup runs before any virtualenv or container exists).

The format is mosquitto 2.0's `user:$7$101$<salt>$<hash>` (PBKDF2-SHA512, 101 rounds, a 12-byte salt,
as `mosquitto_passwd` writes it).
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

ITERATIONS = 101
SALT_BYTES = 12


def password_hash(password: str, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    """The `$7$` entry mosquitto 2.0 checks a password against."""
    salt = salt if salt is not None else os.urandom(SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, iterations, dklen=64)
    return f"$7${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def passwd_text(accounts: Mapping[str, str]) -> str:
    """A mosquitto password file for `{user: password}`."""
    for user in accounts:
        if not user or ":" in user or any(c.isspace() for c in user):
            raise ValueError(f"not a broker user name: {user!r}")
    return "".join(f"{user}:{password_hash(password)}\n" for user, password in accounts.items())


def write_private(path: Path, text: str, mode: int = 0o600) -> None:
    """Write a file only its owner can read (it holds passwords or their hashes)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(path, mode)
