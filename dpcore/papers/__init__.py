"""Paper packages: one per reproduced paper, each built on the paper-independent library.

* :mod:`dpcore.papers.p000_proactive` -- van Dijk, N. V. Nguyen, T. N. Nguyen, L. M. Nguyen, P. H. Nguyen,
  "Proactive DP: A Multiple Target Optimization Framework for DP-SGD" (arXiv 2102.09030).
* :mod:`dpcore.papers.p001_isrl` -- Lowy & Razaviyayn, "Private Federated Learning Without a Trusted Server"
  (ICLR 2023).
* :mod:`dpcore.papers.p002_modelmix` -- Xiao, Wan, Devadas, "Differentially Private Deep Learning with ModelMix".
* :mod:`dpcore.papers.p003_shuffling` -- van Dijk, P. H. Nguyen, T. N. Nguyen, L. M. Nguyen, "Generalizing
  DP-SGD with Shuffling and Batch Clipping".
* :mod:`dpcore.papers.p004_contraction` -- Asoodeh, Chen, Calmon, Özgür, "Differentially Private Federated
  Learning: An Information-Theoretic Perspective" (ISIT 2021).
* :mod:`dpcore.papers.reference` -- legacy published DP-SGD ε (Abadi et al. 2016, TF Privacy, Opacus,
  jax_privacy).

A paper package imports the library (``dpcore.accounting``, ``dpcore.training``, ``dpcore.federated``, …)
and never another paper package; the library never imports a paper package.
"""
