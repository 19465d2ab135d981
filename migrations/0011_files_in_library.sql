-- Each file as it completes (issue 25; docs/qbittorrent.md, Early layout): how many of a download's
-- files are in the library while the rest still downloads (0 until one is laid out early; a done
-- download's files are its journal's, this only tells the views during the download).
ALTER TABLE download ADD COLUMN files_in_library INTEGER NOT NULL DEFAULT 0;
