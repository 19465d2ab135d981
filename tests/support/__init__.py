"""Test helpers that start real components (brokers, qBittorrent, fake HTTP services)."""
