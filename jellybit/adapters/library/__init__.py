"""The library on disk, in one place: roots and containment (`roots`), links and their removal
(`files`), the crash-safe journal (`journal`), what is on disk now (`disk`), and the `Layouter`
port's implementation that puts them together (`layouter`, with `reuse` and `title_groups`)."""
