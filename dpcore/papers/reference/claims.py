"""Claim specifications of the reference numbers (paper id ``"ref"``): DP-SGD ε values published by
Abadi et al. (CCS 2016), TF Privacy, Opacus and jax_privacy, each with the publication and the place.

Every legacy ε used RDP with Mironov's conversion (Abadi et al.'s moments accountant is the same
computation), so ours is that accountant; the tolerance is half a unit of the last printed digit.
"""

from __future__ import annotations

from dpcore.claims import ClaimSpec, Finding, NotebookClaims, specs_by_key
from dpcore.papers.reference.controls import CONTROLS
from dpcore.papers.reference.controls import Control as ControlSetting
from dpcore.verdicts import CONTROL_ATOL, TrainedRule

__all__ = ["SPECS", "CONTROL_SPECS", "CLAIMS", "NOTEBOOKS", "TITLE"]

TITLE = "published DP-SGD ε of Abadi et al. 2016, TF Privacy, Opacus, jax_privacy"

_ABADI = (
    "Abadi et al., 'Deep Learning with Differential Privacy', CCS 2016, §3.1, moments accountant paragraph: "
    "ε ≈ 1.26 for sampling ratio q = 0.01, σ = 4, δ = 10^-5 and T = 10000 steps (ε ≈ 9.34 by strong composition)"
)
_OPACUS = (
    "Opacus examples/mnist_README.md (earlier version), 'Sample parameter sets': ({eps}, 10^-5)-DP for "
    "`{cmd} -sr=0.004` (q = 240/60000 = 0.004)"
)
_OPACUS_NOTE = "the current mnist_README.md prints {now} for the same command"
_HALF_CENT = 0.005

_EPSILON_SPECS: tuple[ClaimSpec, ...] = (
    ClaimSpec(
        "ref",
        "abadi2016.eps",
        "Abadi et al. 2016 §3.1",
        "ε at δ = 1e-5, q = 0.01, σ = 4, T = 10,000",
        1.26,
        "reference",
        _ABADI,
        atol=_HALF_CENT,
    ),
    ClaimSpec(
        "ref",
        "abadi2016.eps.via_record",
        "Abadi et al. 2016 §3.1",
        "ε at δ = 1e-5, q = 0.01, σ = 4, T = 10,000, from a run record (epsilon_for_record)",
        1.26,
        "reference",
        _ABADI,
        atol=_HALF_CENT,
    ),
    ClaimSpec(
        "ref",
        "tfp.readme.eps",
        "TF Privacy tutorials README",
        "ε at δ = 1e-5, MNIST N = 60000, B = 256, σ = 1.12, 60 epochs",
        2.92,
        "reference",
        "TF Privacy tutorials/README.md, 'Select Parameters' table, first row (learning rate 0.08, noise multiplier "
        "1.12, 256 microbatches, 60 epochs, privacy eps 2.92; also 'Expected Output')",
        atol=_HALF_CENT,
    ),
    ClaimSpec(
        "ref",
        "tfp.keras_notebook.eps",
        "TF Privacy Classification_Privacy.ipynb",
        "ε at δ = 1e-5, MNIST N = 60000, B = 250, σ = 1.3, 15 epochs",
        1.18,
        "reference",
        "TF Privacy tutorials/Classification_Privacy.ipynb, 'Measure the differential privacy guarantee': "
        "compute_dp_sgd_privacy(n=60000, batch_size=250, noise_multiplier=1.3, epochs=15, delta=1e-5) reports 1.18",
        atol=_HALF_CENT,
    ),
    ClaimSpec(
        "ref",
        "opacus.mnist.sigma1.3",
        "Opacus MNIST README",
        "ε at δ = 1e-5, q = 0.004, σ = 1.3, 15 epochs",
        1.16,
        "reference",
        _OPACUS.format(eps="1.16", cmd="-n=15 --sigma=1.3"),
        atol=_HALF_CENT,
        note=_OPACUS_NOTE.format(now="1.19 (1.18 in its example output)"),
    ),
    ClaimSpec(
        "ref",
        "opacus.mnist.sigma1.1",
        "Opacus MNIST README",
        "ε at δ = 1e-5, q = 0.004, σ = 1.1, 60 epochs",
        2.91,
        "reference",
        _OPACUS.format(eps="2.91", cmd="-n 60 --sigma=1.1"),
        atol=_HALF_CENT,
        note=_OPACUS_NOTE.format(now="3.01"),
    ),
    ClaimSpec(
        "ref",
        "opacus.mnist.sigma0.7",
        "Opacus MNIST README",
        "ε at δ = 1e-5, q = 0.004, σ = 0.7, 45 epochs",
        6.86,
        "reference",
        _OPACUS.format(eps="6.86", cmd="-n=45 --sigma=.7"),
        atol=_HALF_CENT,
        note=_OPACUS_NOTE.format(now="7.10"),
    ),
    ClaimSpec(
        "ref",
        "opacus.gdp.mu",
        "Opacus GDP accountant (historic)",
        "μ of μ-GDP, Poisson CLT, N = 60000, B = 256, σ = 1.3, 15 epochs",
        0.227,
        "reference",
        "Opacus, module docstring of its historic GDP accountant script (compute_muP --N=60000 --batch_size=256 "
        "--noise_multiplier=1.3 --epochs=15): 'the DP-optimizer satisfies 0.227-GDP'",
        atol=0.0005,
    ),
    ClaimSpec(
        "ref",
        "jax_privacy.calibrated_sigma",
        "jax_privacy accounting docstring",
        "noise multiplier calibrated for ε = 1 at δ = 1e-6, q = 0.1, T = 512 (PLD)",
        9.66,
        "reference",
        "jax_privacy, docstring example of its noise calibration (PLD accountant): σ = 9.66 for target ε = 1, "
        "δ = 1e-6, sampling probability 0.1, 512 steps",
        atol=_HALF_CENT,
    ),
)


def _control_spec(control: ControlSetting) -> ClaimSpec:
    """Issue 51: a positive control as a claim of the reference publication.  The published accuracy (and its
    citation) lives in :data:`dpcore.papers.reference.controls.CONTROLS`; the tolerance is the rule by which a control
    holds (:data:`dpcore.verdicts.CONTROL_ATOL`: two published spreads, at least 1 point); the privacy level is theirs
    and a run counts at or below it under our accounting of what ran."""
    pub = control.published
    atol = max(2.0 * pub.spread, CONTROL_ATOL) if pub.spread else CONTROL_ATOL
    rule = TrainedRule(
        epsilon=pub.epsilon,
        accounting="ours on what ran (PLD of the training; a private normalisation composed in by RDP)",
        pipeline=control.pipelines,
    )
    return ClaimSpec(
        "ref",
        control.claim_key,
        "positive control (issue 51)",
        f"test accuracy (%), {pub.readout}: {control.command}",
        pub.value,
        "reference",
        pub.citation,
        atol=atol,
        scale="full",
        rule=rule,
    )


#: one claim per positive control of issue 51, decided from the committed runs of experiment ``ref_controls``
CONTROL_SPECS: tuple[ClaimSpec, ...] = tuple(_control_spec(c) for c in CONTROLS.values())
SPECS: tuple[ClaimSpec, ...] = _EPSILON_SPECS + CONTROL_SPECS
CLAIMS = specs_by_key(SPECS)
_TOUR = tuple(s for s in SPECS if s.key == "abadi2016.eps.via_record")
NOTEBOOKS: tuple[NotebookClaims, ...] = (
    NotebookClaims.of(
        "00_accounting/dpsgd_accountants",
        "published DP-SGD ε (accountants) and the positive controls' accuracies",
        tuple(s for s in SPECS if s not in _TOUR),
    ),
    NotebookClaims.of("training/engine_tour", "ε from a training run record", _TOUR),
)


# ---------------------------------------------------------------------------------------------- findings (issue 41)
FINDINGS: tuple[Finding, ...] = (
    Finding(
        "ref",
        "positive_controls",
        "trained",
        "Published private results (Opacus's MNIST example; Tramèr & Boneh's nine cells at ε = 3) run with their "
        "settings on our trainer and loaders, decided by the rules (note: seeds, our ε beside theirs); a miss is a "
        "finding about our pipeline.",
        "positive controls of our pipelines by the rules",
        False,
        ("ref.control.*",),
        "results/paper/ref_controls/ read by dpcore.papers.reference.controls.control_frame",
        readings=("as published: their command on our trainer, Poisson sampling at their rate, our loaders",),
        untested="CIFAR-10's original files (the mirror holds a JPEG re-encoding); the runs not yet committed",
    ),
    Finding(
        "ref",
        "published_eps",
        "reproduced",
        "The ε that Abadi et al. 2016, TF Privacy, Opacus and jax_privacy publish are reproduced by our accountants.",
        "published DP-SGD ε reproduced",
        False,
        ("abadi2016.*", "tfp.*", "opacus.*", "jax_privacy.*"),
        "notebook 00_accounting/dpsgd_accountants",
    ),
)
