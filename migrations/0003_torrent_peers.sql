-- The swarm as qBittorrent last reported it, for the views: connected seeds and peers.
-- NULL = not reported yet. (0002 is left to the Telegram transport's tables.)
ALTER TABLE download ADD COLUMN num_seeds INTEGER;
ALTER TABLE download ADD COLUMN num_peers INTEGER;
