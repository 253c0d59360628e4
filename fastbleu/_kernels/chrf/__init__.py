"""fastbleu._kernels.chrf."""
