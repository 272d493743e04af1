"""Proactive DP (van Dijk et al., arXiv 2102.09030): σ(ε, δ) calculators, App. D.4 / E.1 searches, tables."""
