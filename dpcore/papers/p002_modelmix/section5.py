"""The accountant behind the experiments of §5 of Xiao, Wan, Devadas (ModelMix): Tables I–II and §5.3.

The paper prints no noise multipliers.  Settings come from Appendix E (q, c, T, τ schedules) and §5.2
(c = 20, p = 100 "in all experiments"); τ is read for the averaged update (u = (τ/η)·B/c,
:func:`dpcore.accounting.modelmix.envelope_width`).

* :data:`AUTHORS_CIFAR10` -- the settings of the authors' public accountant script for the CIFAR-10
  ResNet-20 run (GitHub junwan0224/ModelMix, ``ModelMixPrivacyAccount.m``: B = 1500, z = 0.335,
  3400 iterations, τ = 0.15η, p = 100, integer α ≤ 19), which gives Table II's ε = 8;
* :func:`table2_noise` / :func:`table1_noise` -- z for each ε column of Tables II and I;
* :func:`transfer_epsilon` -- §5.3's private transfer learning: 0.85× the noise of Tramèr and Boneh
  (ICLR 2021; ε = 2 at T = 2700, q = 1024/50000) with the τ thirds of Appendix E.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from dpcore.accounting import modelmix as mm
from dpcore.accounting.rdp import RDP_ORDERS
from dpcore.papers.p002_modelmix.fig3 import accountant_range
from dpcore.validation import check_positive, check_positive_int, check_sequence

__all__ = [
    "AUTHORS_CIFAR10",
    "TABLE2_SETTINGS",
    "TABLE1_SETTINGS",
    "TRANSFER",
    "authors_cifar10",
    "authors_cifar10_variants",
    "table2_noise",
    "table1_noise",
    "transfer_noise",
    "transfer_phases",
    "transfer_epsilon",
    "transfer_claim_values",
    "FIG2CD",
    "fig2cd_noise",
    "fig2cd_claim_values",
]

DELTA = 1e-5
#: The authors' accountant script for the CIFAR-10 ResNet-20 run (Table II, ε = 8).
AUTHORS_CIFAR10: dict = dict(
    n=50_000, batch_size=1500, noise_multiplier=0.335, clip=20.0, tau=0.15, delta=DELTA, linf_blocks=100
)
AUTHORS_STEPS = 3400  # the script's iteration count (Appendix E: T = 3500)
AUTHORS_ORDERS = tuple(range(2, 20))  # the script's integer α ≤ 19 (α = 1 carries no RDP bound)
#: Table II (Appendix E): data set -> (n, expected batch, iterations, ε columns of the ModelMix row).
TABLE2_SETTINGS: dict[str, tuple[int, int, int, tuple[float, ...]]] = {
    "CIFAR-10": (50_000, 1500, 3500, (4.0, 5.0, 6.0, 7.0, 8.0)),
    "SVHN": (73_260, 1830, 4000, (2.0, 4.0, 5.0, 6.0, 8.0)),
}
#: Table I (Appendix E): data set -> (n, iterations); batch 8192, c = 1, τ = 0.05η then 0.025η.
TABLE1_SETTINGS: dict[str, tuple[int, int]] = {"CIFAR-10": (50_000, 700), "FMNIST": (60_000, 800)}
TABLE1_EPSILONS: tuple[float, ...] = (0.2, 0.6, 1.0)
#: §5.3 / Appendix E transfer learning: Tramèr–Boneh's run, ModelMix's clip, τ thirds and noise factor.
TRANSFER: dict = dict(n=50_000, batch_size=1024, reference_steps=2700, reference_epsilon=2.0, clip=0.1,
                      taus=(0.0075, 0.005, 0.0025), noise_factor=0.85)  # fmt: skip


def authors_cifar10(*, steps: int = AUTHORS_STEPS, orders: Sequence[float] | None = AUTHORS_ORDERS,
                    conversion: str = "mironov") -> float:  # fmt: skip
    """ε of the authors' CIFAR-10 accountant settings (Corollary 4.1 corrected, bound alone)."""
    fields = {k: v for k, v in AUTHORS_CIFAR10.items() if k != "delta"}
    return mm.epsilon(mm.ModelMixSetting(**fields), steps=steps, delta=AUTHORS_CIFAR10["delta"], conversion=conversion,
                      orders=orders, bound="modelmix")  # fmt: skip


def authors_cifar10_variants() -> pd.Series:
    """ε of the authors' CIFAR-10 settings with one thing changed: orders 2..64, Appendix E's T = 3500, the
    Balle et al. 2020 conversion."""
    variants = {
        "orders 2..64": dict(orders=None),
        "T = 3500 (Appendix E)": dict(steps=3500),
        "Balle conversion": dict(conversion="balle"),
    }
    return pd.Series({name: authors_cifar10(**kw) for name, kw in variants.items()}, name="eps")


def table2_noise() -> pd.DataFrame:
    """z for each ModelMix ε of Table II (p = 100, τ = 0.15η, c = 20, Mironov, integer α ≤ 64) and the ε
    that regular DP-SGD with the *same* noise would cost (sampled Gaussian, TF-Privacy orders ≤ 64)."""
    rows = []
    for dataset, (n, batch, steps, targets) in TABLE2_SETTINGS.items():
        kw = dict(n=n, batch_size=batch, steps=steps, delta=DELTA, conversion="mironov")
        for target in targets:
            z = mm.noise_multiplier_for_epsilon(target, clip=20.0, tau=0.15, linf_blocks=100, bound="modelmix", **kw)
            rows.append({"dataset": dataset, "eps_MM": target, "z": z,
                         "same-noise regular eps": mm.regular_dpsgd_epsilon(noise_multiplier=z, **kw)})  # fmt: skip
    return pd.DataFrame(rows)


def table1_noise(epsilons: Sequence[float] = TABLE1_EPSILONS) -> pd.DataFrame:
    """z for each ε of Table I's ModelMix row (p = 1, TF-Privacy orders up to 512, Mironov, τ halves)."""
    epsilons = [check_positive("epsilons", e) for e in check_sequence("epsilons", epsilons)]
    rows = []
    for dataset, (n, steps) in TABLE1_SETTINGS.items():
        phases = [(steps // 2, 0.05), (steps - steps // 2, 0.025)]
        for target in epsilons:
            z = mm.noise_multiplier_for_epsilon(
                target, n=n, batch_size=8192, steps=steps, delta=DELTA, clip=1.0,
                phases=phases, conversion="mironov", bound="modelmix", orders=mm.TF_PRIVACY_ORDERS,
            )  # fmt: skip
            rows.append({"dataset": dataset, "eps": target, "z": z})
    return pd.DataFrame(rows)


def transfer_noise() -> float:
    """Tramèr–Boneh's noise multiplier: regular DP-SGD at ε = 2 after 2700 steps of q = 1024/50000
    (their accountant: orders 1.1..10.9 and 12..63, Mironov conversion)."""
    t = TRANSFER
    return mm.noise_multiplier_for_epsilon(
        t["reference_epsilon"], n=t["n"], batch_size=t["batch_size"], steps=t["reference_steps"], delta=DELTA,
        method="dpsgd", conversion="mironov", orders=RDP_ORDERS,
    )  # fmt: skip


def transfer_phases(steps: int) -> list[tuple[int, float]]:
    """Appendix E's τ schedule: 0.0075η, 0.005η, 0.0025η for the first, second and last third of ``steps``."""
    steps = check_positive_int("steps", steps, minimum=3)
    third = steps // 3
    a, b, c = TRANSFER["taus"]
    return [(third, a), (third, b), (steps - 2 * third, c)]


def transfer_epsilon(steps: int, *, reference_noise: float | None = None) -> float:
    """ModelMix's ε in §5.3 after ``steps`` iterations at 0.85× the reference noise (c = 0.1, p = 1, bound alone)."""
    phases = transfer_phases(steps)
    z0 = transfer_noise() if reference_noise is None else check_positive("reference_noise", reference_noise)
    t = TRANSFER
    with accountant_range(reference_noise=z0):
        setting = mm.ModelMixSetting(n=t["n"], batch_size=t["batch_size"], noise_multiplier=t["noise_factor"] * z0,
                                     clip=t["clip"])  # fmt: skip
        return mm.schedule_epsilon(phases, setting, delta=DELTA, conversion="mironov", bound="modelmix")


def transfer_claim_values(reference_noise: float | None = None) -> dict[str, float]:
    """Claim key -> ModelMix's §5.3 ε for the two readings of the iteration count (1500 and 2700)."""
    z0 = transfer_noise() if reference_noise is None else check_positive("reference_noise", reference_noise)
    return {f"sec5.3.transfer_eps.T{t}": transfer_epsilon(t, reference_noise=z0) for t in (1500, 2700)}


#: Fig. 2(c, d) (§3.2): q = 0.05 and 2,000 iterations (as panels (a, b)), c = 8, τ = 0.05η for ModelMix, ε = 8
#: for regular DP-SGD at δ = 1e-5; n = CIFAR-10's 50,000 (panel (c)); p = 100 as in "all experiments" (§5.2)
FIG2CD: dict = dict(n=50_000, sample_rate=0.05, steps=2000, clip=8.0, tau=0.05, epsilon=8.0, linf_blocks=100)


def fig2cd_noise(*, n: int = FIG2CD["n"], sample_rate: float = FIG2CD["sample_rate"],
                 steps: int = FIG2CD["steps"], epsilon: float = FIG2CD["epsilon"]) -> float:  # fmt: skip
    """The noise multiplier z of Fig. 2(c, d) (Xiao, Wan, Devadas, §3.2): the one that 'ensures an (ε = 8,
    δ = 1e-5) guarantee for regular DP-SGD' at q = 0.05, T = 2000, under the paper's accountant (sampled Gaussian
    RDP, Theorem 2.2's Mironov conversion)."""
    n = check_positive_int("n", n)
    rate = check_positive("sample_rate", sample_rate)
    if rate > 1:
        raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}")
    epsilon, steps = check_positive("epsilon", epsilon), check_positive_int("steps", steps)
    with accountant_range(epsilon=epsilon, steps=steps):  # a target the calibration cannot reach names them
        return mm.noise_multiplier_for_epsilon(
            epsilon, n=n, batch_size=rate * n, steps=steps, delta=DELTA, method="dpsgd", conversion="mironov",
        )  # fmt: skip


def fig2cd_claim_values(z: float | None = None) -> dict[str, tuple[float | bool, str]]:
    """Claim key -> (our value, note) for Fig. 2(c, d)'s privacy statements (§3.2): the regular DP-SGD ε at the
    noise z of :func:`fig2cd_noise` (``fig2cd.dpsgd_eps``), and whether ModelMix with the *same* noise and
    τ = 0.05η (c = 8, p = 100, Corollary 4.1 corrected, Mironov) has a smaller ε (``fig2cd.mm_better_eps``:
    'ModelMix can achieve a much better DP guarantee under the same setup')."""
    z = fig2cd_noise() if z is None else check_positive("z", z)
    f = FIG2CD
    kw = dict(n=f["n"], batch_size=f["sample_rate"] * f["n"], steps=f["steps"], delta=DELTA, conversion="mironov")
    with accountant_range(z=z):
        regular = mm.regular_dpsgd_epsilon(noise_multiplier=z, **kw)
        setting = mm.ModelMixSetting(n=kw["n"], batch_size=kw["batch_size"], noise_multiplier=z, clip=f["clip"],
                                     tau=f["tau"], linf_blocks=f["linf_blocks"])  # fmt: skip
        mixed = mm.epsilon(setting, steps=kw["steps"], delta=DELTA, conversion="mironov", bound="modelmix")
    note = f"z = {z:.4f}: regular DP-SGD eps {regular:.4f}, ModelMix (tau = 0.05eta, c = 8, p = 100) eps {mixed:.4f}"
    return {"fig2cd.dpsgd_eps": (regular, note), "fig2cd.mm_better_eps": (bool(mixed < regular), note)}
