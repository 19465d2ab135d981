"""One module per outside system; each turns that system's failures into domain errors."""
