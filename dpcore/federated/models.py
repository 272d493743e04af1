"""Generalised linear models used in the experiments of Lowy & Razaviyayn (ICLR 2023, §6, App. I).

A model is a weight matrix W ∈ ℝ^{k×d} (k outputs, d features, no separate bias: the
datasets carry a constant column where the paper uses one).  For a record (x, y) the
logits are z = W x ∈ ℝ^k, the loss is f(z, y) and the per-example gradient is the
rank-one matrix ψ(z, y) xᵀ with ψ = ∂f/∂z, so ‖∇f‖ = ‖ψ‖·‖x‖.  Every algorithm in
:mod:`dpcore.federated.algorithms` only needs ψ, which keeps the silo computations
batched matrix products.

* :class:`LogisticLoss` -- binary logistic regression, y ∈ {0, 1} (MNIST odd/even, Fig. 4/7).
  The paper "clipped ⟨w, x⟩ to [−15, 15] before feeding it into the logistic loss";
  the loss value does so, the gradient uses σ(z) − y (within 3.1e-7 of the clipped one).
* :class:`SquaredLoss` -- linear regression, f = (z − y)²/2 (insurance, Fig. 5/8/9).
* :class:`SoftmaxLoss` -- multinomial logistic regression, y ∈ {0..k−1} (obesity, Fig. 6).

>>> import torch
>>> LogisticLoss().psi(torch.tensor([[0.0]]), torch.tensor([1.0]))
tensor([[-0.5000]])
"""

from __future__ import annotations

import torch

from dpcore.validation import check_choice, check_positive_int

__all__ = ["GLMLoss", "LogisticLoss", "SquaredLoss", "SoftmaxLoss", "LOSSES", "make_loss"]

LOGIT_CLIP = 15.0


class GLMLoss:
    """Loss f(z, y) of a linear model with k outputs; ``z`` has shape [..., k], ``y`` shape [...]."""

    name: str = ""
    num_outputs: int = 1

    def psi(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """∂f/∂z, shape [..., k]."""
        raise NotImplementedError

    def loss(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """f(z, y), shape [...]."""
        raise NotImplementedError

    def mistakes(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """1.0 where the prediction is wrong (classification losses only), shape [...]."""
        raise NotImplementedError(f"{self.name} is not a classification loss")


class LogisticLoss(GLMLoss):
    """Binary logistic loss f = log(1 + e^{z}) − y z on z clipped to [−15, 15]; ψ = σ(z) − y."""

    name = "logistic"
    num_outputs = 1

    def psi(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(z) - y.unsqueeze(-1).to(z.dtype)

    def loss(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        zc = z[..., 0].clamp(-LOGIT_CLIP, LOGIT_CLIP)
        return torch.nn.functional.softplus(zc) - y.to(z.dtype) * zc

    def mistakes(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return ((z[..., 0] > 0).to(z.dtype) != y.to(z.dtype)).to(z.dtype)


class SquaredLoss(GLMLoss):
    """Squared loss f = (z − y)²/2 (the paper's F = ‖Y − Xw‖²/(2N0) is its average); ψ = z − y."""

    name = "squared"
    num_outputs = 1

    def psi(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return z - y.unsqueeze(-1).to(z.dtype)

    def loss(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return 0.5 * (z[..., 0] - y.to(z.dtype)) ** 2


class SoftmaxLoss(GLMLoss):
    """Cross-entropy of softmax(z) against class y; ψ = softmax(z) − e_y."""

    name = "softmax"

    def __init__(self, num_classes: int) -> None:
        self.num_outputs = check_positive_int("num_classes", num_classes, minimum=2)

    def psi(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        p = torch.softmax(z, dim=-1)
        onehot = torch.nn.functional.one_hot(y.long(), self.num_outputs).to(z.dtype)
        return p - onehot.expand_as(p)

    def loss(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        idx = y.long().unsqueeze(-1).expand(*z.shape[:-1], 1)
        return torch.logsumexp(z, dim=-1) - torch.gather(z, -1, idx)[..., 0]

    def mistakes(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (z.argmax(dim=-1) != y.long()).to(z.dtype)


LOSSES = ("logistic", "squared", "softmax")


def make_loss(name: str, num_outputs: int = 1) -> GLMLoss:
    """``"logistic"``, ``"squared"`` or ``"softmax"`` (with ``num_outputs`` classes)."""
    check_choice("loss", name, LOSSES)
    if name == "logistic":
        return LogisticLoss()
    if name == "squared":
        return SquaredLoss()
    return SoftmaxLoss(num_outputs)
