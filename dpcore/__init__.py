"""dpcore: the reproducible, tested companion to five papers on DP-SGD and private FL."""

__version__ = "0.1.0"
