"""fastbleu.metrics.chrf."""
