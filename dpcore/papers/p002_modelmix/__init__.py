"""ModelMix (Xiao, Wan, Devadas): Corollary 4.1 as printed and corrected, Fig. 3 settings, Example 3.1."""
