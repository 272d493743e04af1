"""ModelMix (paper 002, Algorithm 1) as a wrapper around any DP update.

Each iteration k keeps the last two published iterates w_{k−1} (the current parameters) and w_{k−2}.
The private gradient is computed at the *unmixed* w_{k−1}; then, coordinate by coordinate,

* lines 6–8: where |w_{k−1}(j) − w_{k−2}(j)| < τ_k the two states are pushed apart along
  sign(w_{k−1}(j) − w_{k−2}(j)) (sign(0) := +1);
* line 10: the state is replaced by α_k(j)·w_{k−1}(j) + (1 − α_k(j))·w_{k−2}(j), α_k(j) ~ U[0, 1],

and the optimizer step is applied to the mixed state.  w_{k−2} then becomes the unmodified w_{k−1}.

**τ convention (Xiao, Wan, Devadas, §5: "τ = 0.15η").**  τ is given as a ratio ρ of the learning rate of
the *averaged* update: τ_k = ρ_k · η_k ("τ = 0.15η").  In the units of Theorem 4.1's summed gradient
the uniform half-width is τ/(2η_sum) with η_sum = η/(q n), so the accountant's dimensionless width
is u = ρ · q · n / c (q·n the expected batch size, c the clip norm).  The run record stores ρ, the
phases, q, n and c so that :mod:`dpcore.accounting.modelmix` can compute u.

Gap rules: ``"exact"`` (default; the authors' code and the note's recommendation) moves each state
by (τ − gap)/2 so the gap becomes exactly τ; ``"paper"`` is Algorithm 1 read literally: ±τ/2 each,
so the gap becomes gap + τ.  Both guarantee a gap ≥ τ, which is all the accountant assumes.

>>> w1, w0 = torch.tensor([1.0, 0.0, 5.0]), torch.tensor([1.0, 0.05, 0.0])
>>> a, b = enforce_gap(w1, w0, 0.1, "exact")
>>> [round(v, 3) for v in a.tolist()], [round(v, 3) for v in b.tolist()]
([1.05, -0.025, 5.0], [0.95, 0.075, 0.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from dpcore.validation import check_choice, check_nonnegative, check_range

__all__ = ["GAP_RULES", "ModelMixConfig", "enforce_gap", "mix"]

GAP_RULES = ("exact", "paper")


@dataclass(frozen=True)
class ModelMixConfig:
    """ModelMix settings.

    ``tau_ratio`` is ρ (τ_k = ρ·η_k) or a list of phases ``[(fraction_end, ρ), …]`` covering the run,
    e.g. ``[(0.5, 0.05), (1.0, 0.025)]`` for Table I's "0.05η first half, 0.025η rest".
    """

    tau_ratio: float | Sequence[tuple[float, float]] = 0.15
    gap_rule: str = "exact"
    phases: tuple[tuple[float, float], ...] = field(init=False)

    def __post_init__(self) -> None:
        check_choice("gap_rule", self.gap_rule, GAP_RULES)
        if isinstance(self.tau_ratio, (int, float)):
            phases = ((1.0, check_nonnegative("tau_ratio", self.tau_ratio)),)
        else:
            phases = tuple(
                (check_range("phase end", float(e), 0.0, 1.0), check_nonnegative("tau_ratio", float(r)))
                for e, r in self.tau_ratio
            )
            if (
                not phases
                or any(b[0] <= a[0] for a, b in zip(phases, phases[1:], strict=False))
                or phases[-1][0] != 1.0
            ):
                raise ValueError("tau_ratio phases must have increasing ends finishing at 1.0")
        object.__setattr__(self, "phases", phases)

    def ratio(self, step: int, total_steps: int) -> float:
        """ρ in force at round ``step`` (0-based) of ``total_steps``."""
        frac = (step + 0.5) / max(total_steps, 1)
        for end, rho in self.phases:
            if frac <= end:
                return rho
        return self.phases[-1][1]

    def describe(self, total_steps: int) -> dict:
        """Phases as (steps, ρ) pairs, as the accountant needs them."""
        steps = [self.ratio(k, total_steps) for k in range(total_steps)]
        runs: list[list] = []
        for rho in steps:
            if runs and runs[-1][1] == rho:
                runs[-1][0] += 1
            else:
                runs.append([1, rho])
        return {
            "gap_rule": self.gap_rule,
            "tau_convention": "tau = rho * lr (averaged update)",
            "phases": [{"steps": n, "tau_ratio": r} for n, r in runs],
        }


def enforce_gap(current: Tensor, previous: Tensor, tau: float, gap_rule: str = "exact") -> tuple[Tensor, Tensor]:
    """Lines 6–8 of Algorithm 1 (paper 002): make every coordinate gap at least τ."""
    check_choice("gap_rule", gap_rule, GAP_RULES)
    diff = current - previous
    sign = torch.where(diff >= 0, 1.0, -1.0).to(current.dtype)
    small = diff.abs() < tau
    if gap_rule == "exact":
        shift = (tau - diff.abs()) / 2
    else:
        shift = torch.full_like(diff, tau / 2)
    shift = torch.where(small, shift, torch.zeros_like(shift))
    return current + sign * shift, previous - sign * shift


def mix(current: Tensor, previous: Tensor, tau: float, gap_rule: str, generator: torch.Generator) -> Tensor:
    """Gap enforcement then the uniform coordinate-wise convex combination (line 10 without the step)."""
    a, b = enforce_gap(current, previous, tau, gap_rule)
    alpha = torch.rand(current.shape, generator=generator, device=current.device, dtype=current.dtype)
    return alpha * a + (1 - alpha) * b
