"""fastbleu.metrics.ter."""
