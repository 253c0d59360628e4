"""fastbleu.statistics."""
