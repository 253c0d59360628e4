"""Statistics: UTF-8 columns or token ids -> token hashes -> per-segment int64 statistics."""
