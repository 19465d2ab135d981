"""The LLM adapter: `client` talks to any OpenAI-compatible chat-completions server; `answer` is the
structured answer it asks for (pydantic models, the strict JSON schema, validation against the files)."""

from jellybit.adapters.llm.client import OpenAiLlm

__all__ = ["OpenAiLlm"]
