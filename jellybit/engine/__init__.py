"""Use-cases over the ports: ingest, the state machine, events, the worker, commands, layout."""
