"""fastbleu.metrics.bleu."""
