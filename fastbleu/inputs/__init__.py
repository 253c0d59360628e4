"""Inputs: lists, numpy/Arrow arrays and files as UTF-8 columns, and reference streams."""
