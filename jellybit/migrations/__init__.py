"""SQL migrations shipped inside the package (`NNNN_name.sql`, applied in order)."""
