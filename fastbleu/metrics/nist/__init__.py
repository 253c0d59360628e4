"""fastbleu.metrics.nist."""
