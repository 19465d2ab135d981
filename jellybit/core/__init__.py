"""Pure domain: states and transitions, models, recognition scoring, Jellyfin naming. No I/O."""
