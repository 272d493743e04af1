"""What a private run did, in one vocabulary shared by training, federated code and accounting.

Sampling (how each step's batch is drawn):

* ``"poisson"`` -- every record joins each batch independently with probability q (add/remove-one
  neighbours; Abadi et al. 2016).
* ``"shuffle"`` -- one random permutation per epoch cut into disjoint batches (replace-one neighbours).
* ``"fixed"``   -- each batch is a fresh uniform subset of fixed size drawn without replacement
  (replace-one neighbours; Wang, Balle, Kasiviswanathan 2019).

A run record may also say ``"replacement"`` (each batch is K independent uniform draws *with* replacement,
as the silos of ISRL-DP MB-SGD do): no library accountant covers it, so records with it are refused.

Clipping (what is clipped to norm C before the noise is added):

* ``"individual"`` -- every per-example gradient (standard DP-SGD);
* ``"batch"``      -- the mean gradient of the batch (van Dijk et al., "Generalizing DP-SGD with
  Shuffling and Batch Clipping", Algorithm 1 with m = 1);
* ``"mixed"``      -- the mean gradients of the m groups of a batch (same paper, 1 < m < batch size).
"""

from __future__ import annotations

from dpcore.validation import check_choice

__all__ = ["SAMPLINGS", "RECORD_SAMPLINGS", "CLIPPINGS", "check_sampling", "check_clipping"]

SAMPLINGS: tuple[str, ...] = ("poisson", "shuffle", "fixed")
CLIPPINGS: tuple[str, ...] = ("individual", "batch", "mixed")
#: What a run record may say: the samplings above, plus sampling with replacement (federated MB-SGD silos).
RECORD_SAMPLINGS: tuple[str, ...] = (*SAMPLINGS, "replacement")


def check_sampling(sampling: object, *, allowed: tuple[str, ...] = SAMPLINGS) -> str:
    """``sampling`` as one of :data:`SAMPLINGS` (and of ``allowed``); ``ValueError`` otherwise."""
    check_choice("sampling", sampling, SAMPLINGS)
    if sampling not in allowed:
        raise ValueError(f"sampling={sampling!r} is not supported here; allowed: {', '.join(allowed)}")
    return str(sampling)


def check_clipping(clipping: object) -> str:
    """``clipping`` as one of :data:`CLIPPINGS`; ``ValueError`` otherwise."""
    return check_choice("clipping", clipping, CLIPPINGS)
