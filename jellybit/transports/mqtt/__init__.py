"""The MQTT transport: the bridge (`bridge`: the reconnect loop, retained state on change, requests
answered on their response topic), how requests are routed and remembered (`requests`,
`request_queue`, `uploads`, `failures`), the command handlers (`handlers`) and the state the worker
publishes (`state`)."""

from __future__ import annotations

from jellybit.transports.mqtt.bridge import Extension, Handler, Message, MqttBridge, StateSource, encode
from jellybit.transports.mqtt.handlers import build_handlers
from jellybit.transports.mqtt.state import EngineState

__all__ = ["EngineState", "Extension", "Handler", "Message", "MqttBridge", "StateSource", "build_handlers",
           "encode"]
