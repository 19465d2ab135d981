"""One module per page; each has `register(live, ...)` that adds its `@ui.page`."""
