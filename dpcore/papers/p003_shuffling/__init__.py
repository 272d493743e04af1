"""Shuffling and batch clipping (van Dijk et al.): Tables 1-2 bounds, errata, comparison tables."""
