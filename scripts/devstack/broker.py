"""Broker accounts for the local stack: the worker, the panel, scripts and the CLI (`cli`) and Home
Assistant (`homeassistant`) get passwords; nobody is anonymous.

mosquitto's own password file format (`user:$7$101$<salt>$<hash>`: PBKDF2-SHA512, 101 rounds, a
12-byte salt, as `mosquitto_passwd` 2.0 writes it), an ACL like the one shipped for compose, and
the keys a config written before this change lacks, added in place (the file is the user's).
"""

from __future__ import annotations

import json
import os
import pwd
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from devstack.passwd import passwd_text, write_private
from jellybit.config import Config

WORKER_ACCOUNT = "jellybit"
PANEL_ACCOUNT = "panel"
CLI_ACCOUNT = "cli"                     # mosquitto_pub/sub, scripts, the CLI by hand
HA_ACCOUNT = "homeassistant"            # Home Assistant's MQTT integration
OWN_ACCOUNTS = (PANEL_ACCOUNT, CLI_ACCOUNT, HA_ACCOUNT)     # passwords kept in accounts.json

ACL = f"""# Written by run-local on every start (see mosquitto/acl for the compose stack).
user {WORKER_ACCOUNT}
topic readwrite jellybit/#
topic readwrite homeassistant/#

user {PANEL_ACCOUNT}
topic write jellybit/request/#

user {CLI_ACCOUNT}
topic write jellybit/request/#

user {HA_ACCOUNT}
topic write jellybit/request/#
topic readwrite homeassistant/#

# Every account: the retained state and the events, and only its own answers
# (jellybit/response/<user name>/...; mosquitto/README.md).
pattern read jellybit/+
pattern read jellybit/downloads/#
pattern read jellybit/reviews/#
pattern read jellybit/ha/#
pattern read jellybit/response/%u/#
"""


def account_passwords(accounts_file: Path) -> dict[str, str]:
    """The panel's, the CLI's and Home Assistant's broker passwords: made once, kept in a file of
    their own (0600); one missing from an older file is added."""
    try:
        known = json.loads(accounts_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    known = known if isinstance(known, dict) else {}
    passwords = {name: value for name in OWN_ACCOUNTS if isinstance(value := known.get(name), str) and value}
    if len(passwords) < len(OWN_ACCOUNTS):
        passwords = {name: passwords.get(name) or secrets.token_urlsafe(18) for name in OWN_ACCOUNTS}
        write_private(accounts_file, json.dumps(passwords))
    return passwords


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


def upgrade_config(config_path: Path, config: Config) -> list[str]:
    """Give a local config broker credentials for the worker and a panel login when it lacks them.

    New configs get them on their first start; older ones (written when the local broker was
    anonymous and the panel had no login) get them added in place. Returns what was added.
    """
    added: list[str] = []
    mqtt: dict[str, str] = {}
    if config.mqtt.username is None:
        mqtt["username"] = json.dumps(WORKER_ACCOUNT)
    if config.mqtt.password is None or not config.mqtt.password.get_secret_value():
        mqtt["password"] = json.dumps(secrets.token_urlsafe(18))
    added += [f"mqtt.{key}" for key in add_missing_keys(config_path, "mqtt", mqtt)] if mqtt else []
    panel: dict[str, str] = {}
    if config.panel.username is None and not config.panel.open:
        panel["username"] = json.dumps("admin")
        panel["password"] = json.dumps(secrets.token_urlsafe(12))
    if config.panel.storage_secret is None:
        panel["storage_secret"] = json.dumps(secrets.token_urlsafe(32))
    added += [f"panel.{key}" for key in add_missing_keys(config_path, "panel", panel)] if panel else []
    return added


def write_broker_files(folder: Path, config: Config) -> dict[str, str]:
    """Write the password file and the ACL (both 0600); return the panel's account for its process."""
    if config.mqtt.username is None or config.mqtt.password is None:
        raise ValueError("the local stack's config needs mqtt.username and mqtt.password")
    own = account_passwords(folder / "accounts.json")
    accounts = {config.mqtt.username: config.mqtt.password.get_secret_value(), **own}
    write_private(folder / "passwd", passwd_text(accounts))
    write_private(folder / "acl", ACL.replace(f"user {WORKER_ACCOUNT}\n", f"user {config.mqtt.username}\n"))
    return {"JB_PANEL_MQTT_USER": PANEL_ACCOUNT, "JB_PANEL_MQTT_PASSWORD": own[PANEL_ACCOUNT]}


def security_lines(folder: Path) -> str:
    """The mosquitto config lines that turn anonymous access off and name the files."""
    # Started as root, mosquitto would switch to its own user and no longer read 0600 files.
    user = pwd.getpwuid(os.getuid()).pw_name
    return (f"allow_anonymous false\npassword_file {folder / 'passwd'}\nacl_file {folder / 'acl'}\n"
            f"user {user}\n")
