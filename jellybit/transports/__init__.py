"""Thin transports: bytes -> command -> result. No business logic, no SQL."""
