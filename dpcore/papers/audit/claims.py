"""Claim specifications of the privacy audit (paper id ``"ref"``: the audit belongs to no paper).

Each correct mechanism's row states that the audit's ε lower bound (95 % confidence) does not exceed the ε the
accountant claims for the same configuration; each broken variant's row states that the audit flags it (lower
bound above the claimed ε).  These are ``derived`` rows: they follow from the definition of (ε, δ)-DP (a valid
lower bound can never exceed a valid upper bound) rather than from a printed number.
"""

from __future__ import annotations

from dpcore.claims import ClaimSpec, specs_by_key

__all__ = ["SPECS", "CLAIMS", "CORRECT_KEYS", "BROKEN_KEYS"]

_SOUND = (
    "(ε, δ)-DP definition: an empirical lower bound valid at 95 % confidence (Jagielski et al. 2020 Thm 1 with "
    "Clopper–Pearson; Steinke, Nasr, Jagielski 2023 Thm 5.2 for one run) cannot exceed the accountant's ε "
    "(dpcore.accounting.records.epsilon_for_record, PLD) of a correct implementation; check: lower bound ≤ ε"
)
_CAUGHT = (
    "a broken implementation leaks more than its record claims; check: the audit's 95 % lower bound exceeds the "
    "accountant's ε of the configuration the trainer recorded"
)

#: notebook row label -> claim key
CORRECT_KEYS = {
    "all": "audit.dpsgd.all_iterates.lb_le_eps",
    "all_small_delta": "audit.dpsgd.all_iterates_small_delta.lb_le_eps",
    "last": "audit.dpsgd.last_iterate.lb_le_eps",
    "one_run": "audit.dpsgd.one_run.lb_le_eps",
    "modelmix": "audit.modelmix.mixed_states.lb_le_eps",
}
BROKEN_KEYS = {
    "clipping-disabled": "audit.broken.clipping_disabled.flagged",
    "noise-x0.5": "audit.broken.noise_x0.5.flagged",
    "noise-seed-reused": "audit.broken.noise_seed_reused.flagged",
}

_WHAT = {
    "all": "DP-SGD (Poisson, individual clipping), every update observed, many runs",
    "all_small_delta": "DP-SGD (Poisson, individual clipping), every update observed, many runs, small δ",
    "last": "DP-SGD (Poisson, individual clipping), only the final model observed, many runs",
    "one_run": "DP-SGD (Poisson, individual clipping), every update observed, one run with many canaries",
    "modelmix": "ModelMix (τ = 0.01η, Poisson, individual clipping), every mixed state observed, against its "
    "amplified ε (RDP accountant of Xiao, Wan, Devadas)",
}
_BROKEN_WHAT = {
    "clipping-disabled": "DP-SGD with clipping disabled (canary gradient norm 10 C)",
    "noise-x0.5": "DP-SGD with the noise multiplied by 0.5",
    "noise-seed-reused": "DP-SGD drawing the same noise (seed of round 0) every round",
}

SPECS: tuple[ClaimSpec, ...] = tuple(
    ClaimSpec("ref", key, "privacy audit", f"{_WHAT[label]}: ε lower bound ≤ accountant ε", True, "derived", _SOUND)
    for label, key in CORRECT_KEYS.items()
) + tuple(
    ClaimSpec(
        "ref",
        key,
        "privacy audit",
        f"{_BROKEN_WHAT[name]}: flagged (lower bound > claimed ε)",
        True,
        "derived",
        _CAUGHT,
    )  # fmt: skip
    for name, key in BROKEN_KEYS.items()
)

CLAIMS = specs_by_key(SPECS)
