"""Claim specifications of the privacy audit (paper id ``"ref"``: the audit belongs to no paper).

Each correct mechanism's row states that the audit's ε lower bound (95 % confidence) does not exceed the ε the
accountant claims for the same configuration; each broken variant's row states that the audit flags it (lower
bound above the claimed ε).  These are ``derived`` rows: they follow from the definition of (ε, δ)-DP (a valid
lower bound can never exceed a valid upper bound) rather than from a printed number.  Rows comparing shuffled runs
with the Poisson *heuristic* (not a proven bound for shuffling) are reported in the notebook's table, not claimed.

One ``reference`` row reproduces a published auditing result: with every iterate observed and gradient-space Dirac
canaries, the audit of DP-SGD is (nearly) tight (Nasr, Song, Thakurta, Papernot, Carlini 2021; Nasr et al. 2023).
"""

from __future__ import annotations

from dpcore.claims import ClaimSpec, Finding, NotebookClaims, specs_by_key

__all__ = ["SPECS", "CLAIMS", "NOTEBOOKS", "CORRECT_KEYS", "BROKEN_KEYS", "REFERENCE_KEYS", "TIGHTNESS_TOLERANCE"]

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
    "bc_sh_a1": "audit.p003.bc_shuffle.a1_adversary.lb_le_eps_a1",
    "bc_sh_a0": "audit.p003.bc_shuffle.a0_adversary.lb_le_eps_a1",
    "mc_sh_a1": "audit.p003.mc_shuffle.a1_adversary.lb_le_eps_a1",
    "mc_sh_a0": "audit.p003.mc_shuffle.a0_adversary.lb_le_eps_a1",
    "isrl_silo": "audit.p001.isrl_silo.messages.lb_le_eps",
}
#: notebook row label -> reference claim key (tightness of the all-iterates DP-SGD audit)
REFERENCE_KEYS = {"all": "audit.reference.nasr2021.dpsgd_all_iterates_tight"}
#: |ε̂/ε − 1| within which the all-iterates audit counts as tight (ε̂: the held-out test at its empirical rates)
TIGHTNESS_TOLERANCE = 0.25
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
    "bc_sh_a1": "paper 003 batch clipping under shuffling, every update observed, adversary A_1 (knows the batches), "
    "against the A_1 ε (G_{√E/σ}, van Dijk et al. Thm F.1)",
    "bc_sh_a0": "paper 003 batch clipping under shuffling, every update observed, standard adversary A_0 (batches "
    "hidden), against the A_1 ε (an upper bound for A_0 too; the paper has no A_0 analysis for shuffling)",
    "mc_sh_a1": "paper 003 mixed clipping (s = 2, m = 2) under shuffling, every update observed, adversary A_1, "
    "against the A_1 ε",
    "mc_sh_a0": "paper 003 mixed clipping (s = 2, m = 2) under shuffling, every update observed, standard adversary "
    "A_0, against the A_1 ε",
    "isrl_silo": "paper 001 ISRL-DP MB-SGD, every message of one silo observed (replace-one), against its per-silo ε "
    "(with-replacement PLD accountant of paper 001)",
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

_NASR = (
    'Nasr, Song, Thakurta, Papernot, Carlini, "Adversary Instantiation: Lower Bounds for Differentially Private '
    'Machine Learning", IEEE S&P 2021 (arXiv 2101.04535), Abstract: for DP-SGD with the strongest adversary (every '
    'iterate, crafted gradient canaries) "our lower bounds are tight and match the theoretical upper bound"; '
    'likewise Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini, Terzis, "Tight Auditing of Differentially '
    'Private Machine Learning", USENIX Security 2023 (arXiv 2302.07956), Abstract and §4 (Dirac canary).  Check: '
    "ε̂/ε of our all-iterates Dirac audit (ε̂: the held-out best test's ε at its empirical rates, which tends to ε "
    "when the audit is tight; its 95 % Clopper–Pearson lower bound is in the note) equals 1 within ±0.25"
)

SPECS = SPECS + (
    ClaimSpec(
        "ref",
        REFERENCE_KEYS["all"],
        "privacy audit",
        "DP-SGD (Poisson, σ = 2, q = 1/2, T = 8), every update observed, Dirac canary: tightness ε̂/ε of the audit "
        "(1 = the lower bound matches the accountant)",
        1.0,
        "reference",
        _NASR,
        atol=TIGHTNESS_TOLERANCE,
    ),
)

CLAIMS = specs_by_key(SPECS)
NOTEBOOKS: tuple[NotebookClaims, ...] = (NotebookClaims.of("audit/privacy_audit", "privacy audit", SPECS),)


# ---------------------------------------------------------------------------------------------- findings (issue 41)
FINDINGS: tuple[Finding, ...] = (
    Finding("ref", "audits_sound", "reproduced",
            "Every audit's empirical lower bound stays below the accountant's ε, and the deliberately broken "
            "mechanisms are caught.", "audits stay below the accountants' ε", False, ("audit.*",),
            "notebook audit/privacy_audit (figures/audit/audit_lower_bounds.csv)"),
)
