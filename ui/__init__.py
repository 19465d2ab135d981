"""The Jellybit panel: a NiceGUI web app that is a pure MQTT client of the worker (see docs/panel.md)."""
