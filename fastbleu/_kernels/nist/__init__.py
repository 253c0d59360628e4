"""fastbleu._kernels.nist."""
