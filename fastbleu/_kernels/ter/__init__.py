"""fastbleu._kernels.ter."""
