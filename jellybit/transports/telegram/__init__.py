"""Telegram, the second transport beside MQTT (docs/telegram.md): `transport` (lifecycle, polling, the
webhook), `handlers` and `commands` (an update -> one `Commands` call), `pings` (events -> queued cards),
`render` (protocol models -> HTML cards, words from `jellybit.present`), `send`, `text`, `access`."""
