"""Configuration: the example documents every key, and errors name the key and the file."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr

from jellybit.config import (
    CONFIG_ENV,
    SECRET_ENV,
    Config,
    config_path,
    env_key,
    load_config,
    parse_config,
)
from jellybit.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[1] / "config.example.toml"
HEADER = re.compile(r"^(#\s?)?(\[\[?)([a-z_.]+)(\]\]?)\s*$")
KEY = re.compile(r"^(#\s?)?([a-z_][a-z0-9_]*) = (.*)$")


def sections(model: type[BaseModel] = Config, prefix: str = "") -> dict[str, type[BaseModel]]:
    """Every table path ('' for the top, 'mqtt.tls', 'paths.path_map') -> its model."""
    found = {prefix: model}
    for name, field in model.model_fields.items():
        for candidate in (field.annotation, *typing.get_args(field.annotation)):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                found.update(sections(candidate, f"{prefix}.{name}".lstrip(".")))
    return found


def leaf_keys() -> set[str]:
    """Every scalar key of the configuration as a dotted path."""
    tables = sections()
    keys = set()
    for path, model in tables.items():
        for name in model.model_fields:
            dotted = f"{path}.{name}".lstrip(".")
            if dotted not in tables:
                keys.add(dotted)
    return keys


def scan(text: str) -> tuple[list[tuple[int, str, bool]], list[str]]:
    """Return (line number, dotted key, commented?) for every key line, and the table headers seen."""
    tables = sections()
    current, keys, headers = "", [], []
    for number, line in enumerate(text.splitlines(), 1):
        header = HEADER.match(line)
        if header and header.group(3) in tables:
            current = header.group(3)
            headers.append(current)
            continue
        key = KEY.match(line)
        if key and key.group(2) in tables[current].model_fields:
            keys.append((number, f"{current}.{key.group(2)}".lstrip("."), bool(key.group(1))))
    return keys, headers


def uncomment(text: str) -> str:
    """The example with every commented-out key and table enabled."""
    keys, _ = scan(text)
    commented = {number for number, _, is_commented in keys if is_commented}
    lines = text.splitlines()
    for index, line in enumerate(lines):
        header = HEADER.match(line)
        if index + 1 in commented or (header and header.group(1) and header.group(3) in sections()):
            lines[index] = re.sub(r"^#\s?", "", line)
    return "\n".join(lines) + "\n"


def value_at(config: BaseModel, path: tuple[str, ...]) -> object:
    """Follow a key path into the config."""
    node: object = config
    for part in path:
        node = getattr(node, part)
    return node


# ---------------------------------------------------------------- the example file


def test_example_parses_and_shows_the_defaults() -> None:
    """config.example.toml is valid, and every active value in it is the real default."""
    text = EXAMPLE.read_text(encoding="utf-8")
    assert parse_config(text, str(EXAMPLE), env={}) == Config()


def test_every_field_has_a_description() -> None:
    """Each model field carries a description (it is the documentation of the key)."""
    missing = [
        f"{path}.{name}".lstrip(".")
        for path, model in sections().items()
        for name, field in model.model_fields.items()
        if not (field.description or "").strip()
    ]
    assert missing == []


def test_every_key_appears_in_the_example_with_a_comment() -> None:
    """Every key is in the example (set, or commented out with an example) right under a comment."""
    text = EXAMPLE.read_text(encoding="utf-8")
    keys, headers = scan(text)
    found = [dotted for _, dotted, _ in keys]
    assert sorted(set(found)) == sorted(leaf_keys())
    assert len(found) == len(set(found)), "a key is documented twice"
    assert set(headers) == set(sections()) - {""}
    lines = text.splitlines()
    key_lines = {number for number, _, _ in keys}
    for number, dotted, _ in keys:
        assert lines[number - 2].startswith("# "), f"{dotted} has no comment above it"
        assert number - 1 not in key_lines, f"{dotted} has no comment of its own"


def test_commented_examples_are_valid() -> None:
    """Enabling every commented-out key and table still gives a valid configuration."""
    config = parse_config(uncomment(EXAMPLE.read_text(encoding="utf-8")), "uncommented example", env={})
    mappings = [(m.qbittorrent, m.local) for m in config.paths.path_map]
    assert mappings == [("/downloads", "/srv/media/downloads")]
    for path in SECRET_ENV.values():
        secret = value_at(config, path)
        assert isinstance(secret, SecretStr)
        assert secret.get_secret_value()


@pytest.mark.parametrize("policy", ["ask", "keep_both", "replace_if_better"])
def test_the_upgrade_policy_is_read(policy: str) -> None:
    """layout.upgrades takes its three policies; "ask" is the default."""
    assert parse_config(f"[layout]\nupgrades = '{policy}'\n", env={}).layout.upgrades == policy
    assert Config().layout.upgrades == "ask"


def test_no_section_is_marked_as_a_later_feature() -> None:
    """Every section of the example configures something that runs (the Telegram bot does now)."""
    assert "later feature" not in EXAMPLE.read_text(encoding="utf-8")


def test_an_enabled_bot_needs_a_token_only_where_it_runs_and_an_https_webhook() -> None:
    """`telegram.enabled` without a token parses (the panel and the CLI do not run the bot); asking
    for the token (the worker does) fails and says where it goes; a webhook must be HTTPS."""
    config = parse_config("[telegram]\nenabled = true\n", "t.toml", env={})
    with pytest.raises(ConfigError, match="JELLYBIT_TELEGRAM_TOKEN in the worker's environment"):
        config.telegram.required_token()
    config = parse_config("[telegram]\nenabled = true\n", "t.toml", env={"JELLYBIT_TELEGRAM_TOKEN": "1:x"})
    assert config.telegram.required_token() == "1:x"
    with pytest.raises(ConfigError, match="https://"):
        parse_config("[telegram]\nwebhook_url = 'http://bot.example'\n", "t.toml", env={})


def test_no_real_secrets_in_the_example() -> None:
    """Secrets in the example are placeholders, all commented out."""
    text = EXAMPLE.read_text(encoding="utf-8")
    keys, _ = scan(text)
    secret_keys = {".".join(path) for path in SECRET_ENV.values()}
    lines = text.splitlines()
    for number, dotted, commented in keys:
        if dotted in secret_keys:
            assert commented, dotted
            assert "change-me" in lines[number - 1], dotted


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("[nope]\na = 1\n", "nope", "unknown key"),
        ("[mqtt]\nbogus = 1\n", "mqtt.bogus", "unknown key"),
        ("[mqtt.tls]\nca = 'x'\n", "mqtt.tls.ca", "unknown key"),
        ("[[paths.path_map]]\nqbittorrent = '/a'\nlocal = '/b'\nextra = 1\n", "paths.path_map.0.extra",
         "unknown key"),
        ("[[paths.path_map]]\nqbittorrent = '/a'\n", "paths.path_map.0.local", "Field required"),
        ("[worker]\npoll_interval = 'fast'\n", "worker.poll_interval", "valid number"),
        ("[worker]\npoll_interval = 0\n", "worker.poll_interval", "greater than 0"),
        ("[panel]\nport = 70000\n", "panel.port", "less than 65536"),
        ("[mqtt]\nurl = 'http://broker'\n", "mqtt.url", "mqtt://"),
        ("[log]\nlevel = 'LOUD'\n", "log.level", "DEBUG"),
        ("[layout]\nupgrades = 'replace'\n", "layout.upgrades", "'replace_if_better'"),
        ("[telegram]\nallowed_user_ids = ['me']\n", "telegram.allowed_user_ids.0", "valid integer"),
        ("mqtt = 5\n", "mqtt", "valid dictionary"),
    ],
)
def test_invalid_values_name_the_key_and_the_file(text: str, key: str, message: str) -> None:
    """Unknown keys and wrong types fail with the dotted key and the file name."""
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "/etc/jellybit/config.toml", env={})
    assert "/etc/jellybit/config.toml" in caught.value.message
    assert f"  {key}: " in caught.value.message
    assert message in caught.value.message


def test_bad_toml_names_the_file() -> None:
    """A syntax error says which file is not TOML and where."""
    with pytest.raises(ConfigError, match=r"^/etc/jb\.toml: not valid TOML: .*line 1"):
        parse_config("[mqtt\nurl = 1\n", "/etc/jb.toml", env={})


def test_load_config_reads_the_file_and_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--config wins over JELLYBIT_CONFIG; errors carry the path; no file at all = defaults."""
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text("[mqtt]\nbase_topic = 'jb-test'\n", encoding="utf-8")
    bad.write_text("[mqtt]\nkeepalive = 'soon'\n", encoding="utf-8")
    monkeypatch.setenv(CONFIG_ENV, str(bad))
    assert config_path(good) == good
    assert config_path() == bad
    assert load_config(good, env={}).mqtt.base_topic == "jb-test"
    with pytest.raises(ConfigError, match=re.escape(str(bad))) as caught:
        load_config(env={})
    assert "mqtt.keepalive" in caught.value.message
    missing = tmp_path / "no.toml"
    with pytest.raises(ConfigError, match=f"cannot read configuration file {re.escape(str(missing))}"):
        load_config(missing, env={})
    monkeypatch.delenv(CONFIG_ENV)
    assert config_path() is None
    assert load_config(env={}) == Config()


# ---------------------------------------------------------------- secrets


def test_secret_env_covers_every_secret_field() -> None:
    """Every SecretStr field can come from the environment, and every variable names one."""
    secret_fields = set()
    for path, model in sections().items():
        for name, field in model.model_fields.items():
            if SecretStr in (field.annotation, *typing.get_args(field.annotation)):
                secret_fields.add(tuple(f"{path}.{name}".lstrip(".").split(".")))
    assert set(SECRET_ENV.values()) == secret_fields


@pytest.mark.parametrize(("variable", "path"), sorted(SECRET_ENV.items()))
def test_each_secret_comes_from_its_environment_variable(variable: str, path: tuple[str, ...]) -> None:
    """The variable sets the secret with or without the section, and wins over the file."""
    from_env = parse_config("", "x.toml", env={variable: "from-env-Пароль"})
    assert value_at(from_env, path).get_secret_value() == "from-env-Пароль"
    section, key = ".".join(path[:-1]), path[-1]
    file_text = f"[{section}]\n{key} = 'from-file'\n"
    assert value_at(parse_config(file_text, "x.toml", env={}), path).get_secret_value() == "from-file"
    both = parse_config(file_text, "x.toml", env={variable: "from-env"})
    assert value_at(both, path).get_secret_value() == "from-env"


def test_secrets_never_show_in_repr() -> None:
    """repr, str and the JSON dump of a config never reveal a secret."""
    env = {name: f"secret-{index}-xyzzy" for index, name in enumerate(SECRET_ENV)}
    config = parse_config(EXAMPLE.read_text(encoding="utf-8"), str(EXAMPLE), env=env)
    for rendered in (repr(config), str(config), config.model_dump_json(), repr(config.model_dump())):
        assert "xyzzy" not in rendered
    assert config.qbittorrent.password.get_secret_value().endswith("xyzzy")


# ---------------------------------------------------------------- metadata defaults


def test_tvmaze_is_on_by_default_and_keyed_providers_are_off_without_a_key() -> None:
    metadata = load_config(env={}).metadata
    assert (metadata.tvmaze.enabled, metadata.tmdb.enabled, metadata.tvdb.enabled) == (True, False, False)


def test_a_key_in_the_environment_turns_its_provider_on() -> None:
    """docker compose passes JELLYBIT_METADATA_TMDB_API_KEY: that alone is enough."""
    env = {"JELLYBIT_METADATA_TMDB_API_KEY": "0123456789abcdef0123456789abcdef",
           "JELLYBIT_METADATA_TVDB_API_KEY": ""}
    metadata = load_config(env=env).metadata
    assert metadata.tmdb.enabled
    assert not metadata.tvdb.enabled                                 # an empty variable is no key
    explicit = parse_config("[metadata.tmdb]\nenabled = false\n", env=env).metadata
    assert not explicit.tmdb.enabled                                 # a written `enabled = false` wins
    keyed = parse_config('[metadata.tvdb]\napi_key = "k"\n', env={}).metadata
    assert keyed.tvdb.enabled


# ---------------------------------------------------------------- every key from the environment


def env_name(dotted: str) -> str:
    return "JELLYBIT_" + dotted.replace(".", "_").upper()


def test_every_key_has_its_environment_variable() -> None:
    """JELLYBIT_<SECTION>_<KEY> names each key of the file, nested tables included (a list of
    tables, paths.path_map or jellyfin.path_map, is one variable holding JSON)."""
    for dotted in {re.sub(r"^(\w+)\.path_map\..*", r"\1.path_map", key) for key in leaf_keys()}:
        assert env_key(env_name(dotted)) == tuple(dotted.split(".")), dotted
    for other in ("JELLYBIT_CONFIG", "JELLYBIT_LOCAL_DIR", "JELLYBIT_MQTT", "JELLYBIT_MQTT_TLS",
                  "JELLYBIT_PANEL_MQTT_PASSWORD", "MQTT_URL"):
        assert env_key(other) is None, other


def test_the_example_explains_the_environment_variables() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert "JELLYBIT_<SECTION>_<KEY>" in text
    for name in SECRET_ENV:
        assert name in text, name


def test_the_environment_sets_any_key_and_wins_over_the_file() -> None:
    """Strings, numbers, booleans, lists (JSON or commas) and tables of lists; the file loses."""
    text = "[mqtt]\nurl = 'mqtt://127.0.0.1:1883'\n[panel]\nport = 8099\n"
    env = {"JELLYBIT_MQTT_URL": "mqtt://mosquitto:1883", "JELLYBIT_PANEL_PORT": "9100",
           "JELLYBIT_PANEL_HOST": "0.0.0.0", "JELLYBIT_JELLYFIN_ENABLED": "true",
           "JELLYBIT_TELEGRAM_ALLOWED_USER_IDS": "[12, 34]",
           "JELLYBIT_QBITTORRENT_ALLOW_PRIVATE_HOSTS": "tracker.lan, 192.168.1.0/24",
           "JELLYBIT_PATHS_PATH_MAP": '[{"qbittorrent": "/downloads", "local": "/srv/media/downloads"}]',
           "JELLYBIT_MQTT_TLS_INSECURE": "1", "JELLYBIT_RECOGNITION_MIN_MARGIN": "0.2",
           "JELLYBIT_PANEL_USERNAME": "", "JELLYBIT_SOMETHING_ELSE": "ignored"}
    config = parse_config(text, "x.toml", env=env)
    assert config.mqtt.url == "mqtt://mosquitto:1883"
    assert (config.panel.port, config.panel.host, config.panel.username) == (9100, "0.0.0.0", None)
    assert config.jellyfin.enabled
    assert config.telegram.allowed_user_ids == [12, 34]
    assert config.qbittorrent.allow_private_hosts == ["tracker.lan", "192.168.1.0/24"]
    mapped = [(m.qbittorrent, m.local) for m in config.paths.path_map]
    assert mapped == [("/downloads", "/srv/media/downloads")]
    assert config.mqtt.tls.insecure
    assert config.recognition.min_margin == 0.2


def test_a_bad_value_from_the_environment_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"panel\.port: .*\(from JELLYBIT_PANEL_PORT\)"):
        parse_config("", "x.toml", env={"JELLYBIT_PANEL_PORT": "eighty"})
    with pytest.raises(ConfigError, match=r"mqtt\.url: .*\(from JELLYBIT_MQTT_URL\)"):
        parse_config("", "x.toml", env={"JELLYBIT_MQTT_URL": "http://broker"})
