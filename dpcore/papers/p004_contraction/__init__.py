"""Contraction accounting (Asoodeh, Chen, Calmon, Özgür, ISIT 2021): θ_ε, Theorem 2, baselines."""
