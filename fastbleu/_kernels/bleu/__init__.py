"""fastbleu._kernels.bleu."""
