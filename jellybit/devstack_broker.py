"""Broker accounts for the local stack: the worker and the panel get passwords, nobody is anonymous.

mosquitto's own password file format (`user:$7$101$<salt>$<hash>`: PBKDF2-SHA512, 101 rounds, a
12-byte salt, as `mosquitto_passwd` 2.0 writes it), an ACL like the one shipped for compose, and
the keys a config written before this change lacks, added in place (the file is the user's).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

ITERATIONS = 101
SALT_BYTES = 12
WORKER_ACCOUNT = "jellybit"
PANEL_ACCOUNT = "panel"

ACL = f"""# Written by run-local on every start (see mosquitto/acl for the compose stack).
user {WORKER_ACCOUNT}
topic readwrite jellybit/#
topic readwrite homeassistant/#

user {PANEL_ACCOUNT}
topic read jellybit/#
topic write jellybit/request/#
"""


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


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (it holds passwords or their hashes)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(path, 0o600)


def panel_password(accounts_file: Path) -> str:
    """The panel's broker password, made once and kept in a file of its own (0600)."""
    try:
        known = json.loads(accounts_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    password = known.get(PANEL_ACCOUNT) if isinstance(known, dict) else None
    if not isinstance(password, str) or not password:
        password = secrets.token_urlsafe(18)
        write_private(accounts_file, json.dumps({PANEL_ACCOUNT: password}))
    return password


def add_missing_keys(config: Path, section: str, values: Mapping[str, str]) -> list[str]:
    """Add `key = value` lines (TOML values, already quoted) missing from `[section]`; return the keys.

    A key is missing when no `key =` line is in that section; a section that does not exist is
    appended. The rest of the file stays exactly as it was.
    """
    lines = config.read_text(encoding="utf-8").splitlines(keepends=True)
    header = re.compile(rf"^\s*\[{re.escape(section)}\]\s*(#.*)?$")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if start is None:
        text = "".join(lines).rstrip("\n") + f"\n\n[{section}]\n"
        text += "".join(f"{key} = {value}\n" for key, value in values.items())
        write_private(config, text)
        return list(values)
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^\s*\[", lines[i])), len(lines))
    present = {m.group(1) for line in lines[start + 1:end] if (m := re.match(r"^\s*([A-Za-z_]+)\s*=", line))}
    added = [key for key in values if key not in present]
    if added:
        lines[start + 1:start + 1] = [f"{key} = {values[key]}\n" for key in added]
        write_private(config, "".join(lines))
    return added
