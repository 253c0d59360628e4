"""fastbleu._kernels.text."""
