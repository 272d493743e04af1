"""ISRL-DP (Lowy & Razaviyayn, ICLR 2023): noise calibrations, tight per-silo ε, the App. I experiment protocol."""
