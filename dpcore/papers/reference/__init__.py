"""Legacy published DP-SGD ε values (Abadi et al. 2016, TF Privacy, Opacus, jax_privacy) and their settings."""
