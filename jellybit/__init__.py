"""Jellybit: get a torrent into a Jellyfin library correctly, with a human in the loop when it matters."""

__version__ = "0.1.0"
