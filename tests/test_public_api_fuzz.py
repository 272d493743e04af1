"""Fuzzing of the public API (issue 26 §4): every bad input is a clear error, every answer a valid one.

For every public function (a name in ``__all__``) of :mod:`dpcore.accounting` (all its modules) and of the
paper packages' calculator modules, one parameter at a time is replaced by an arbitrary value -- floats
(NaN, ±inf, ±1e308, 1e-308, subnormals), integers (huge ones included), bools, strings, None, complex
numbers, numpy scalars -- while the others keep a valid value (the table of :func:`_base`, built by hand; the
parameters come from :func:`inspect.signature`).  Each call must, within :data:`CALL_TIMEOUT` seconds of CPU
(``signal.ITIMER_PROF``: a computation that does not end fails the test instead of hanging the suite; CPU time,
so a loaded CI machine does not fail a fast call), either

* return a finite non-negative number or a structure of such (lists, dicts, arrays, data frames, dataclasses;
  opaque objects such as callables are accepted as they are), where ∞ is allowed only for the functions of
  :data:`INF_OK` (documented ∞) and negative numbers only for those of :data:`SIGNED` (log scales,
  differences, the erratum values reproduced as printed), or
* raise ``ValueError``/``TypeError`` whose message names the parameter (as a word).

Stricter than that, as the library's own validation (:mod:`dpcore.validation`) is: a number parameter refuses
bools, strings, complex numbers and None (unless None is its documented default), and a flag parameter
refuses anything but a bool.  Each (function, parameter) is one test: a fixed sweep of :data:`SPECIALS`, then
hypothesis (derandomised, 3 examples; only type refusals for the :data:`COSTLY` functions).  Functions not fuzzed
are in :data:`SKIP` with the reason (no parameters, result containers, training, an expensive valid base; the
expensive ones still get :func:`test_expensive_functions_refuse_bad_types`).

Defects found in files owned elsewhere are marked xfail in :data:`XFAIL` (and in :data:`NAMED_REFUSALS`) with the
defect as the reason, temporarily: remove the mark when the owner fixes it.  The whole file takes about a minute of
CPU (one core).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import numbers
import re
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: an extreme input must be refused or answered without numpy overflow warnings: where an overflow is the right limit
#: the function says so in its code (np.errstate with a comment), elsewhere it is a bug to fix
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

CALL_TIMEOUT = 5.0  # seconds per call; issue 26 asks for "a second or two" on the cases it names

ACCOUNTING = [
    "dpcore.accounting",
    *(f"dpcore.accounting.{m}" for m in (
        "calibrate", "dpsgd", "events", "fdp", "gaussian", "mixture", "modelmix", "pld", "rdp", "records",
        "run_record", "shuffled",
    )),
]  # fmt: skip
PAPERS = [
    *(f"dpcore.papers.p000_proactive.{m}" for m in ("calculator", "e1", "moments", "tables")),
    *(f"dpcore.papers.p001_isrl.{m}" for m in ("accounting", "analysis")),
    *(f"dpcore.papers.p002_modelmix.{m}" for m in ("corollary41", "fig3", "section5", "soundness")),
    *(f"dpcore.papers.p003_shuffling.{m}" for m in ("bounds", "tables")),
    *(f"dpcore.papers.p004_contraction.{m}" for m in ("contraction", "baselines")),
]


# --------------------------------------------------------------------------- the public functions
def _public() -> dict[str, Callable]:
    """key -> callable for every function or class named in ``__all__``, each object once (keyed by the module
    that defines it when that module is listed, else by the first listing)."""
    found: dict[int, tuple[str, Callable]] = {}
    for module_name in ACCOUNTING + PAPERS:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            key = f"{module_name}.{name}"
            if id(obj) not in found or obj.__module__ == module_name:
                found[id(obj)] = (key, obj)
    return dict(sorted(found.values()))


PUBLIC = _public()


# --------------------------------------------------------------------------- valid arguments per function
def _eps_of_sigma(sigma: float) -> float:
    return 2.0 / sigma


def _decreasing(x: float) -> float:
    return 1.0 - x


def _delta_of_eps(e: float) -> float:
    return math.exp(-e)


def _curve(alpha: np.ndarray) -> np.ndarray:
    return 1.0 - np.asarray(alpha, dtype=float)


def _record() -> dict:
    return dict(private=True, sampling="poisson", dataset_size=1000, batch_size=10, steps=50, clipping="individual",
                clip_norm=1.0, noise_multiplier=1.0, noise_std=1.0)  # fmt: skip


def _event():
    import dp_accounting

    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 50
    )


def _panel_result():
    from dpcore.papers.p001_isrl import experiments as fe

    eps = [0.5, 1.0, 3.0]
    rows = [dict(curve="Noisy MB SGD", epsilon=e, mean=m) for e, m in zip(eps, (0.9, 0.6, 0.4), strict=True)]
    rows += [dict(curve="Noisy Local SGD", epsilon=e, mean=m) for e, m in zip(eps, (1.0, 0.7, 0.35), strict=True)]
    rows += [dict(curve="MB SGD", epsilon=math.inf, mean=0.3), dict(curve="Local SGD", epsilon=math.inf, mean=0.5)]
    return fe.PanelResult(None, pd.DataFrame(), pd.DataFrame(rows), {}, np.ones((1, 1), dtype=int))


def _fig3_curves() -> pd.DataFrame:
    return pd.DataFrame({"panel": ["c", "c"], "q": [0.02, 0.02], "tau_over_eta": [0.3, 0.3], "steps": [10, 20],
                         "regular DP-SGD": [4.0, 5.0], "ModelMix": [3.0, 4.0], "ModelMix p=25": [2.0, 3.0],
                         "ModelMix p=100": [1.0, 2.0]})  # fmt: skip


A = "dpcore.accounting."
P0, P1, P2, P3, P4 = (f"dpcore.papers.{p}." for p in (
    "p000_proactive", "p001_isrl", "p002_modelmix", "p003_shuffling", "p004_contraction"))  # fmt: skip
DP = dict(sample_rate=0.01, steps=100, delta=1e-5)
MM = dict(n=1000, batch_size=10.0, steps=50, noise_multiplier=1.0, clip=1.0, tau=0.1)
#: ModelMix's functions take the run as one setting (issue 52)
_MMS = dict(n=1000, batch_size=10.0, noise_multiplier=1.0, clip=1.0, tau=0.1)
SH = dict(sigma=2.0, E=3, N=1000, s=10)
P4A = dict(n=100, batch_size=10, sigma=1.5)
ISRL = dict(lipschitz=1.0, rounds=35, n=1238, epsilon=1.0, delta=1e-6, batch_size=443)


def _mm_setting(**changes: Any) -> Any:
    from dpcore.accounting.modelmix import ModelMixSetting

    return ModelMixSetting(**{**_MMS, **changes})


def _base() -> dict[str, dict[str, Any]]:
    """Valid keyword arguments per function (lazy: some build objects)."""
    from dpcore.accounting import fdp
    from dpcore.accounting.mixture import GaussianMixture

    g1 = fdp.Gaussian(1.0)
    mixture = GaussianMixture(np.array([0.0, 1.0]), np.array([0.5, 0.5]), 1.0)
    return {
        # ---- dpcore.accounting
        A + "calibrate.smallest_sigma": dict(eps=_eps_of_sigma, target=1.0),
        A + "dpsgd.resolve_steps": dict(sample_rate=0.01, steps=100, epochs=None),
        A + "dpsgd.method_label": dict(method="pld"),
        A + "dpsgd.describe": dict(method="rdp", sampling="fixed"),
        A + "LabelledEpsilon": dict(value=1.0, rigorous=True, method="rdp", description="d"),
        A + "dpsgd.dpsgd_epsilon": dict(noise_multiplier=1.0, **DP),
        A + "dpsgd.check_noise_multiplier": dict(noise_multiplier=1.0),
        A + "dpsgd.dpsgd_record": dict(noise_multiplier=1.0, sample_rate=0.01, steps=100),
        A + "events.sample_rate_of": dict(batch_size=10, dataset_size=1000, sample_rate=0.01),
        A + "events.sizes_for_rates": dict(rates=[0.01, 0.02], dataset_size=None),
        A + "pld.pld_epsilon_runs": dict(noise_multiplier=1.0, runs=[(0.01, 50), (0.02, 50)], delta=1e-5),
        A + "records.noise_multiplier_for_record": dict(record=_record(), target_epsilon=2.0, delta=1e-5, method="rdp"),
        A + "records.record_from_event": dict(event=_event()),
        A + "dpsgd.dpsgd_noise_multiplier": dict(
            target_epsilon=2.0, method="rdp", sample_rate=0.05, steps=20, delta=1e-5
        ),
        A + "dpsgd.epsilon_curve": dict(
            noise_multiplier=1.0,
            sample_rate=0.01,
            steps=[10, 100],
            delta=1e-5,
            variants=(("rdp", "poisson"), ("gdp", "poisson")),
        ),
        A + "events.check_sampling": dict(sampling="poisson"),
        A + "events.check_clipping": dict(clipping="individual"),
        A + "events.effective_noise_multiplier": dict(noise_multiplier=1.0, sampling="fixed"),
        A + "events.steps_per_epoch": dict(sampling="shuffle", dataset_size=1000, batch_size=10),
        A + "events.steps_for_epochs": dict(epochs=2.0, dataset_size=1000, batch_size=10),
        A + "events.epochs_to_steps": dict(epochs=2.0, per_epoch=3),
        A + "events.steps_for_sample_count": dict(epochs=2.0, dataset_size=1000, batch_size=10),
        A + "dpsgd.default_method": dict(sampling="fixed"),
        A + "events.step_sensitivity": dict(sampling="fixed", clipping="individual"),
        A + "events.clipped_group_size": dict(clipping="mixed", batch_size=12, group_size=4),
        A + "events.groups_per_batch": dict(clipping="mixed", batch_size=12, group_size=4),
        A + "events.groups_per_round": dict(clipping="mixed", mean_batch_size=12.0, group_size=4),
        A + "fdp.Gaussian": dict(mu=1.0),
        A + "fdp.Curve": dict(func=_curve, label="f", symmetric=True),
        A + "fdp.gaussian_tradeoff": dict(mu=1.0, alpha=0.1),
        A + "fdp.gaussian_power": dict(mu=1.0, alpha=0.1),
        A + "fdp.eps_delta_tradeoff": dict(epsilon=1.0, delta=1e-5, alpha=0.1),
        A + "fdp.mu_to_delta": dict(mu=1.0, epsilon=1.0),
        A + "fdp.mu_to_epsilon": dict(mu=1.0, delta=1e-5),
        A + "fdp.tradeoff_to_delta": dict(f=g1, epsilon=1.0, symmetric=True),
        A + "fdp.tradeoff_to_epsilon": dict(f=g1, delta=1e-5, symmetric=True),
        A + "fdp.tradeoff_from_delta_curve": dict(
            epsilons=np.array([0.0, 1.0, 2.0]), deltas=np.array([0.3, 0.1, 0.01])
        ),
        A + "fdp.lower_convex_envelope": dict(x=np.array([0.0, 0.5, 1.0]), y=np.array([1.0, 0.4, 0.0])),
        A + "fdp.inverse_tradeoff": dict(f=g1, alpha=0.1),
        A + "fdp.subsample": dict(f=g1, p=0.1),
        A + "fdp.subsampled_gaussian_tradeoff": dict(mu=1.0, p=0.1, alpha=0.1),
        A + "fdp.compose_gaussian": dict(mus=(1.0, 2.0)),
        A + "fdp.clt_factor": dict(sigma=1.0, sampling="fixed"),
        A + "fdp.clt_mu": dict(sigma=1.0, p=0.01, steps=100.0),
        A + "fdp.group_tradeoff": dict(f=g1, g=2),
        A + "fdp.group_gaussian": dict(mu=1.0, g=2),
        A + "fdp.pld_gaussian_delta": dict(mu=1.0, epsilon=1.0),
        A + "fdp.check_tradeoff": dict(f=g1),
        A + "fdp.check_curve": dict(f=g1),
        A + "gaussian.log_delta_from_mu": dict(mu=1.0, epsilon=1.0),
        A + "gaussian.delta_from_mu": dict(mu=1.0, epsilon=1.0),
        A + "gaussian.epsilon_from_mu": dict(mu=1.0, delta=1e-5),
        A + "gaussian.tradeoff": dict(mu=1.0, alpha=0.1),
        A + "gaussian.power": dict(mu=1.0, alpha=0.1),
        A + "gaussian.noise_to_mu": dict(noise_multiplier=1.0),
        A + "gaussian.upper_root": dict(f=_decreasing, lo=0.0, hi=2.0),
        A + "mixture.GaussianMixture": dict(support=np.array([0.0, 1.0]), weights=np.array([0.5, 0.5]), sigma=1.0),
        A + "mixture.convolve_power": dict(pmf=np.array([0.5, 0.5]), n=3),
        A + "mixture.trim_pmf": dict(pmf=np.array([0.0, 0.5, 0.5]), offset=0),
        A + "modelmix.envelope_width": dict(tau=0.1, clip=1.0, batch_size=100.0),
        A + "modelmix.log_mixture_density": dict(o=0.5, shift=1.0, noise=1.0, width=0.5),
        A + "modelmix.log_moments": dict(ks=[2, 3], noise=1.0, width=0.5),
        A + "modelmix.step_rdp": dict(orders=[2.0, 3.0], sample_rate=0.01, noise_multiplier=1.0, width=0.5),
        A + "modelmix.default_orders": dict(linf_blocks=None),
        A + "modelmix.ModelMixSetting": dict(n=1000, batch_size=10.0, noise_multiplier=1.0, clip=1.0, tau=0.1),
        A + "modelmix.rdp": dict(setting=_mm_setting(), steps=50),
        A + "modelmix.epsilon": dict(setting=_mm_setting(), steps=50, delta=1e-5),
        A + "modelmix.epsilon_curve": dict(setting=_mm_setting(), steps=[10, 50], delta=1e-5),
        A + "modelmix.regular_dpsgd_rdp": dict(n=1000, batch_size=10.0, steps=50, noise_multiplier=1.0),
        A + "modelmix.regular_dpsgd_epsilon": dict(n=1000, batch_size=10.0, steps=50, noise_multiplier=1.0, delta=1e-5),
        A + "modelmix.schedule_rdp": dict(phases=[(25, 0.1), (25, 0.05)], setting=_mm_setting()),
        A + "modelmix.schedule_epsilon": dict(phases=[(25, 0.1), (25, 0.05)], setting=_mm_setting(), delta=1e-5),
        A + "modelmix.noise_multiplier_for_epsilon": dict(
            target_epsilon=2.0, n=1000, batch_size=10.0, steps=50, delta=1e-5, tau=0.1, rtol=1e-3
        ),
        A + "pld.min_delta": dict(steps=100),
        A + "pld.roundoff": dict(steps=100),
        A + "pld.pld_epsilon": dict(noise_multiplier=1.0, **DP),
        A + "pld.pld_delta": dict(noise_multiplier=1.0, sample_rate=0.01, steps=100, epsilon=1.0),
        A + "pld.pld_noise_multiplier": dict(target_epsilon=2.0, **DP),
        A + "rdp.check_orders": dict(orders=[2.0, 3.0], integer=False),
        A + "rdp.subsampled_gaussian_rdp": dict(orders=[2.0, 3.0], noise_multiplier=1.0, sample_rate=0.01),
        A + "rdp.rdp_curve": dict(noise_multiplier=1.0, sample_rate=0.01, steps=100),
        A + "rdp.rdp_to_epsilon": dict(orders=[2.0, 3.0, 4.0], rdp_values=[0.1, 0.2, 0.3], delta=1e-5),
        A + "records.as_record": dict(record=_record()),
        A + "records.choose_accountant": dict(record=_record()),
        A + "records.epsilon_for_record": dict(record=_record(), delta=1e-5, method="rdp"),
        A + "records.AccountantChoice": dict(
            name="dpsgd", adjacency="add/remove", sensitivity=1.0, noise_multiplier=1.0, description="d"
        ),
        A + "run_record.RunRecord": _record(),
        A + "shuffled.rounds_per_epoch": dict(N=1000, batch=10),
        A + "shuffled.batch_clipping_q": dict(N=1000, s=10, g=1),
        A + "shuffled.subsampling_round_pmf": dict(N=1000, g=2, s=5, m=2),
        A + "shuffled.shuffle_collision_pmf": dict(N=1000, s=10, g=2),
        A + "shuffled.mixture_tradeoff": dict(sampling="shuffle", **SH),
        # ---- paper 000
        P0 + "calculator.sigma": dict(epsilon=0.5, delta=1e-5),
        P0 + "calculator.epsilon": dict(sigma=5.0, delta=1e-5),
        P0 + "calculator.h_bound": dict(x=6.0),
        P0 + "calculator.g_bound": dict(x=6.0),
        P0 + "calculator.alpha_max": dict(sigma=6.0),
        P0 + "calculator.gamma_rhs": dict(gamma=3.0, sigma=19.3, epsilon=0.05, k=5.0),
        P0 + "calculator.gamma_rhs_alpha": dict(alpha_bar=0.01, sigma=19.3),
        P0 + "calculator.gamma": dict(sigma=19.3, epsilon=0.05, k=5.0),
        P0 + "calculator.gamma_asymptotic": dict(sigma=19.3, alpha_bar=0.01),
        P0 + "calculator.min_rounds": dict(sigma=19.3, epsilon=0.05, k=5.0),
        P0 + "calculator.asymptotic_min_rounds": dict(epsilon=0.05, k=5.0),
        P0 + "calculator.condition_7": dict(k=5.0, delta=1e-4),
        P0 + "calculator.min_epochs": dict(delta=1e-4),
        P0 + "calculator.theorem_3_1": dict(epsilon=0.05, delta=1e-4, N=10_000, k=5.0, T=1000.0),
        P0 + "calculator.theorem_b4": dict(noise=19.3, epsilon=0.05, delta=1e-4, N=10_000, K=50_000.0, s_bar=26.0),
        P0 + "calculator.dp_calculator": dict(sigma=19.3, N=10_000, k=5.0),
        P0 + "calculator.max_sample_size": dict(N=10_000, k=5.0, epsilon=0.05, delta=1e-4),
        P0 + "calculator.gdp_epsilon": dict(noise=2.0, N=10_000, k=5.0, s=26.0, delta=1e-4),
        P0 + "calculator.rdp_epsilon": dict(noise=2.0, N=10_000, k=5.0, s=26.0, delta=1e-4),
        P0 + "calculator.poisson_gaussian_rdp": dict(q=0.01, noise=1.0, orders=np.array([2.0, 3.0])),
        P0 + "calculator.honest_row": dict(noise=19.3, s=26.0, N=10_000, K=50_000.0, delta=1e-4),
        P0 + "e1.e1_evaluate": dict(s=26, N=10_000, K_j=50_000.0, delta=1e-4),
        P0 + "e1.e1_paper_sigma": dict(s=168, N=10_000, K=50_000.0, delta=1e-4),
        P0 + "e1.max_sample_size_e1": dict(N=10_000, K_j=50_000.0, epsilon_target=0.05, delta=1e-4),
        P0 + "e1.schedule": dict(N=10_000, phases=[(None, 50_000.0)], epsilon_target=0.05, delta=1e-4),
        P0 + "moments.lemma_b3_bound": dict(lam=2, s=26.0, N=10_000, sigma=19.3),
        P0 + "moments.moments_epsilon": dict(sigma=19.3, sample_sizes=26.0, N=10_000, delta=1e-4, rounds=1000),
        P0 + "moments.theorem_b2": dict(sigma=19.3, epsilon=0.05, delta=1e-4, sample_sizes=[26.0] * 10, N=10_000),
        P0 + "tables.Setting": dict(name="LIBSVM", N=10_000, K=50_000, delta=1e-4),
        # ---- paper 001
        P1 + "accounting.noise_std": dict(ISRL),
        P1 + "accounting.noise_variance": dict(ISRL),
        P1 + "accounting.local_sgd_noise_std": dict(ISRL),
        P1 + "accounting.one_pass_noise_std": dict(lipschitz=1.0, epsilon=1.0, delta=1e-6, batch_size=100),
        P1 + "accounting.shuffled_noise_std": dict(
            lipschitz=1.0, rounds=35, n=100, num_silos=10, silos_per_round=5, epsilon=1.0, delta=1e-6
        ),
        P1 + "accounting.batch_size_experiments": dict(n=1238, rounds=35, epsilon=18.0),
        P1 + "accounting.batch_size_theory_min": dict(n=1238, rounds=35, epsilon=1.0, delta=1e-6),
        P1 + "accounting.variance_ratio_theory_to_experiments": dict(rounds=35, delta=1e-6),
        P1 + "accounting.moments_accountant_epsilon_limit": dict(delta=1e-6),
        P1 + "accounting.theory_epsilon_limit": dict(delta=1e-6),
        P1 + "accounting.mbsgd_epsilon": dict(
            noise_std=1.0, lipschitz=1.0, batch_size=10, n=100, rounds=10, delta=1e-5
        ),
        P1 + "accounting.local_sgd_epsilon": dict(
            noise_std=1.0, lipschitz=1.0, n=100, rounds=5, local_steps=2, delta=1e-5
        ),
        P1 + "accounting.one_pass_epsilon": dict(noise_std=1.0, lipschitz=1.0, batch_size=10, delta=1e-5),
        P1 + "accounting.batch_mean_epsilon_upper": dict(noise_std=1.0, clip=1.0, rounds=10, delta=1e-5),
        P1 + "accounting.with_replacement_pld": dict(noise_multiplier=1.0, batch_size=10, n=100),
        P1 + "accounting.mixture_pld": dict(
            upper_means=np.array([0.0, 1.0]),
            upper_weights=np.array([0.9, 0.1]),
            lower_means=np.array([0.0]),
            lower_weights=np.array([1.0]),
        ),
        P1 + "accounting.mixture_pld_pmf": dict(
            upper_means=np.array([0.0, 1.0]),
            upper_weights=np.array([0.9, 0.1]),
            lower_means=np.array([0.0]),
            lower_weights=np.array([1.0]),
        ),
        P1 + "accounting.calibrate_mbsgd_noise_std": dict(
            target_epsilon=2.0, lipschitz=1.0, batch_size=10, n=100, rounds=10, delta=1e-5, rtol=0.05
        ),
        P1 + "accounting.shuffle_round_epsilon": dict(eps0=1.0, n=1, num_silos=10_000, delta=1e-5),
        P1 + "accounting.audit_calibration": dict(
            setting="x", algorithm="mb-sgd", epsilon=1.0, n=100, rounds=5, batch_size=10
        ),
        P1 + "analysis.beats_nonprivate_local_from": dict(result=_panel_result()),
        P1 + "analysis.mb_beats_local_everywhere": dict(result=_panel_result(), max_epsilon=2.0),
        P1 + "analysis.ratio_to_nonprivate_local": dict(result=_panel_result(), min_epsilon=1.0),
        P1 + "analysis.naive_gain": dict(result=_panel_result(), epsilon=1.0),
        P1 + "analysis.privacy_cost": dict(result=_panel_result(), epsilon=3.0),
        P1 + "analysis.share_below_naive": dict(results=[_panel_result()]),
        P1 + "analysis.share_mb_beats_local": dict(results=[_panel_result()]),
        P1 + "analysis.local_beats_mb": dict(result=_panel_result(), epsilon=3.0),
        P1 + "analysis.gains_note": dict(result=_panel_result()),
        P1 + "analysis.noise_dominated": dict(result=_panel_result(), zero_error=0.857),
        P1 + "analysis.mnist_claims": dict(results={1: _panel_result()}, fig4_silos_per_round=[1]),
        P1 + "analysis.insurance_claims": dict(results={(3, 3): _panel_result()}, fig5_panels=[(3, 3)]),
        P1 + "analysis.insurance_mode_claims": dict(
            results={(3, 3): _panel_result()}, fig5_panels=[(3, 3)], mode="authors_batch_mean"
        ),
        P1 + "analysis.obesity_claims": dict(
            results={1: _panel_result()}, authors=pd.DataFrame({"M": [1], "gain_vs_isrl_local_sgd": [0.1]})
        ),
        P1 + "analysis.selected_summary": dict(
            selected=pd.DataFrame(
                {
                    "panel": [1, 1],
                    "curve": ["a", "a"],
                    "epsilon": [1.0, 1.0],
                    "stepsize": [0.1, 0.1],
                    "at_grid_edge": [False, True],
                    "test_metric": [0.5, 0.4],
                    "clip": [np.nan, np.nan],
                }
            ),
            by=["panel"],
        ),  # fmt: skip
        # ---- paper 002
        P2 + "corollary41.corollary41_epsilon": dict(
            n=50_000,
            batch_size=1000.0,
            steps=100,
            noise_multiplier=1.0,
            clip=20.0,
            tau=0.15,
            delta=1e-5,
            linf_blocks=25,
        ),
        P2 + "corollary41.fig3_printed_vs_corrected": dict(z=1.0, panels="c", linf_blocks=(25,)),
        P2 + "corollary41.claim_values": dict(table=pd.DataFrame({"key": ["k", ""], "as printed": [-1.0, 2.0]})),
        P2 + "fig3.amplification_curves": dict(
            steps=[10, 100],
            n=50_000,
            batch_size=1000.0,
            noise_multiplier=1.0,
            clip=20.0,
            tau=0.15,
            delta=1e-5,
            linf_blocks=(None,),
        ),
        P2 + "fig3.panel_curves": dict(calibration=pd.DataFrame({"q": [0.02], "z": [1.0]}), points=2, taus=(0.3,)),
        P2 + "fig3.end_values": dict(curves=_fig3_curves()),
        P2 + "fig3.claim_values": dict(ends=_fig3_curves().drop(columns="steps")),
        P2 + "fig3.literal_units": dict(z=1.0, taus=(0.3,)),
        P2 + "fig3.tau_sweep": dict(z=1.0, points=2),
        P2 + "fig3.p_sweep": dict(z=1.0, ps=(1, 4), taus=(0.3,)),
        P2 + "fig3.tau_slopes": dict(z=1.0, taus=(0.15, 0.3)),
        P2 + "fig3.closer_to": dict(slope=-0.5, target=-0.5, other=-1.0),
        P2 + "fig3.is_decreasing": dict(values=[3.0, 2.0, 1.0]),
        P2 + "fig3.increases_with_steps": dict(curves=_fig3_curves()),
        P2 + "fig3.saturates": dict(ps=[1, 4, 16], values=[3.0, 2.0, 1.5]),
        P2 + "fig3.qualitative_checks": dict(
            curves=_fig3_curves(),
            taus=pd.DataFrame({c: [3.0, 2.0] for c in ("ModelMix", "ModelMix p=25", "ModelMix p=100")}),
            ps=pd.DataFrame({"p": [1, 4, 16], "tau=0.3eta": [3.0, 2.0, 1.5]}),
            slopes={"ModelMix": -0.5, "ModelMix p=100": -1.0},
        ),  # fmt: skip
        P2 + "section5.authors_cifar10": dict(steps=100),
        P2 + "section5.transfer_phases": dict(steps=30),
        P2 + "section5.transfer_epsilon": dict(steps=30, reference_noise=1.0),
        P2 + "section5.transfer_claim_values": dict(reference_noise=1.0),
        P2 + "section5.fig2cd_noise": dict(steps=200),
        P2 + "section5.fig2cd_claim_values": dict(z=1.726),  # Fig. 2(c, d)'s z (issue 41); None calibrates it
        P2 + "soundness.split_epsilons": dict(z=1.0, ms=(1, 2)),
        P2 + "soundness.g_second_differences": dict(z=1.0, width=0.5, ks=(2,), points=5),
        P2 + "soundness.direction_ratios": dict(z=1.0, taus=(0.3,)),
        P2 + "soundness.order_checks": dict(orders=[2.0, 3.0, 4.0], rdp=[0.1, 0.2, 0.3]),
        # ---- paper 003
        P3 + "bounds.lower_bound_function": dict(mu=1.0, l=0.01),
        P3 + "bounds.upper_bound_function": dict(mu=1.0, u=0.01),
        P3 + "bounds.shuffle_collision_pmf": dict(N=1000, s=10, g=2, method="paper"),
        P3 + "bounds.shuffle_collision_monte_carlo": dict(N=100, s=10, g=2, draws=100),
        P3 + "bounds.subsampling_round_monte_carlo": dict(N=100, g=2, s=5, m=2, draws=100),
        P3 + "bounds.tradeoff_bounds": dict(table=1, row=3, sigma=2.0, E=100),
        P3 + "bounds.mixture_tradeoff": dict(sampling="shuffle", **SH),
        P3 + "bounds.a0_epsilon": dict(sigma=2.0, N=1000, batch=10, E=3, delta=1e-5),
        P3 + "bounds.a0_tradeoff": dict(sigma=2.0, N=1000, batch=10, E=3),
        P3 + "bounds.hoeffding_check": dict(N=60_000, batch=64, E=10),
        P3 + "bounds.bound_violations": dict(exact=mixture, bound=g1, alpha=np.array([0.1, 0.5])),
        P3 + "bounds.clt_h_series": dict(sigma=2.0),
        P3 + "bounds.group_crossover": dict(N=60_000, batch=64, sigma=2.0),
        P3 + "bounds.thinned_shuffle_mixture": dict(sigma=2.0, E=10),
        P3 + "tables.row_mechanism": dict(table=1, row=1, batch=64),
        P3 + "tables.exact_mixture": dict(table=1, row=3, sigma=2.0, E=3, N=1000, batch=10, g=1),
        P3 + "tables.table_1_2_rows": dict(sigma=2.0, E=3, N=1000, batch=10, groups=(1,), exact=False),
        P3 + "tables.a0_a1_rows": dict(sigma=2.0, E_values=(3,), N=1000, batches=(10,), pld=False),
        P3 + "tables.group_rows": dict(sigma=2.0, E=3, N=1000, batch=10, groups=(1, 2)),
        P3 + "tables.hoeffding_rows": dict(settings=((1000, 10, 3),)),
        P3 + "tables.collision_rows": dict(settings=((100, 10, 2),), draws=100),
        P3 + "tables.h_series_rows": dict(sigmas=(2.0,)),
        P3 + "tables.thinning_rows": dict(sigma=2.0, E_values=(3,)),
        P3 + "tables.containment_rows": dict(sigma=2.0, E=3, N=1000, batch=10, groups=(1,), alpha=np.array([0.1, 0.5])),
        # ---- paper 004
        P4 + "contraction.theta": dict(epsilon=1.0, r=1.0),
        P4 + "contraction.log_theta": dict(epsilon=1.0, r=1.0),
        P4 + "contraction.hockey_stick": dict(p=[0.5, 0.5], q=[0.4, 0.6], epsilon=0.1),
        P4 + "contraction.kernel_contraction": dict(kernel=[[0.5, 0.5], [0.4, 0.6]], epsilon=0.1),
        P4 + "contraction.gaussian_kernel_contraction": dict(epsilon=1.0, diameter=1.0, noise_std=1.0),
        P4 + "contraction.sensitivity_ratio": dict(batch_size=10, sigma=1.5),
        P4 + "contraction.contraction_ratio": dict(batch_size=10, eta=0.5, sigma=1.5),
        P4 + "contraction.last_iterate_delta": dict(epsilon=1.0, eta=0.5, **P4A),
        P4 + "contraction.log_last_iterate_delta": dict(epsilon=1.0, eta=0.5, **P4A),
        P4 + "contraction.last_iterate_delta_schedule": dict(epsilon=1.0, batch_sizes=[10, 10], etas=0.5, sigmas=1.5),
        P4 + "contraction.log_last_iterate_delta_schedule": dict(
            epsilon=1.0, batch_sizes=[10, 10], etas=0.5, sigmas=1.5
        ),
        P4 + "contraction.corollary1_delta": dict(epsilon=1.0, strong_convexity=1.0, **P4A),
        P4 + "contraction.random_stop_delta": dict(epsilon=1.0, batch_sizes=[10, 10], etas=0.5, sigmas=1.5),
        P4 + "contraction.corollary3_delta": dict(epsilon=1.0, n=100, batch_size=10, eta_min=0.5, sigma_min=1.5),
        P4 + "contraction.worst_position_delta": dict(epsilon=1.0, batch_size=10, sigma=1.5),
        P4 + "contraction.epsilon_for_delta": dict(delta_of_epsilon=_delta_of_eps, delta=1e-5),
        P4 + "contraction.exact_1d_delta": dict(epsilon=1.0, n=20, batch_size=10, eta=0.5, sigma=1.5, grid=51),
        P4 + "baselines.rdp_to_delta": dict(orders=[2.0, 3.0], rdp_values=[0.1, 0.2], epsilon=1.0),
        P4 + "baselines.parallel_delta": dict(epsilon=1.0, batch_size=10, sigma=1.5),
        P4 + "baselines.gaussian_rdp_delta": dict(epsilon=1.0, batch_size=10, sigma=1.5),
        P4 + "baselines.replace_one_poisson_rdp": dict(orders=[2.0, 3.0], sample_rate=0.1, noise_multiplier=3.0),
        P4 + "baselines.poisson_rdp": dict(P4A, orders=(2.0, 3.0, 4.0)),
        P4 + "baselines.poisson_rdp_delta": dict(P4A, epsilon=1.0, orders=(2.0, 3.0, 4.0)),
        P4 + "baselines.poisson_rdp_epsilon": dict(P4A, delta=1e-5, orders=(2.0, 3.0, 4.0)),
        P4 + "baselines.poisson_pld_epsilon": dict(P4A, delta=1e-5),
        P4 + "baselines.gaussian_pld_delta": dict(epsilon=1.0, batch_size=10, sigma=1.5),
        P4 + "baselines.wor_rdp_epsilon": dict(P4A, delta=1e-5),
        P4 + "baselines.pabi_delta": dict(P4A, epsilon=1.0),
        P4 + "baselines.baseline_deltas": dict(P4A, epsilon=1.0, eta=0.5),
        # ---- skipped as expensive: only the type refusals are tested (test_expensive_functions_refuse_bad_types)
        P2 + "fig3.calibrate": dict(sample_rates=(0.02,)),
        P2 + "section5.table1_noise": dict(epsilons=(1.0,)),
        P2 + "soundness.appendix_c_table": dict(z=1.0),
        P4 + "baselines.baseline_table": dict(P4A, eta=0.5),
    }


#: Public callables not fuzzed, with the reason.
SKIP: dict[str, str] = {
    A + "pld.cache_clear": "no parameters",
    P3 + "bounds.table_rows": "no parameters",
    P2 + "section5.authors_cifar10_variants": "no parameters (and expensive: three full accountant runs)",
    P2 + "section5.table2_noise": "no parameters (and expensive: ten calibrations)",
    P2 + "section5.transfer_noise": "no parameters",
    P0 + "calculator.CalculatorResult": "a result container (built only by dp_calculator)",
    P0 + "e1.E1Result": "a result container (built only by e1_evaluate)",
    P1 + "accounting.CalibrationAudit": "a result container (built only by audit_calibration)",
    P3 + "bounds.TradeoffBounds": "a result container (built only by tradeoff_bounds)",
    P1 + "analysis.authors_script_sweep": "trains models on federated trials (expensive, needs data)",
    P1 + "analysis.accelerated_curves": "trains models on federated trials (expensive, needs data)",
    P1 + "analysis.zero_model_error": "evaluates on federated trials (needs data); refuses a non-trials argument",
    P3 + "tables.table_1_2_rows": "expensive valid base (~5 s CPU: the numerical ε of every lemma curve)",
    P1 + "accounting.calibrate_mbsgd_noise_std": "expensive valid base (10-20 tight PLD accountings)",
    P1 + "accounting.audit_calibration": "expensive valid base (two tight PLD accountings, ~3 s)",
    P2 + "fig3.calibrate": "expensive valid base (RDP calibration at T = 5000, ~1 s per call)",
    P2 + "section5.table1_noise": "expensive valid base (four ModelMix calibrations)",
    P2 + "soundness.appendix_c_table": "expensive valid base (every ModelMix check of Appendix C)",
    P4 + "baselines.baseline_table": "expensive valid base (brentq on six δ(ε) curves per δ)",
}

#: Functions whose numbers may be negative (log scales, signed differences, indices), with the reason.
SIGNED: dict[str, str] = {
    A + "gaussian.log_delta_from_mu": "log δ",
    A + "gaussian.upper_root": "the root of an arbitrary function",
    A + "fdp.lower_convex_envelope": "returns its (x, y) points",
    A + "mixture.trim_pmf": "returns an index offset",
    A + "mixture.convolve_power": "returns an index offset",
    A + "modelmix.log_mixture_density": "a log density",
    P4 + "contraction.log_theta": "log δ",
    P4 + "contraction.log_last_iterate_delta": "log δ",
    P4 + "contraction.log_last_iterate_delta_schedule": "log δ",
    P2 + "corollary41.fig3_printed_vs_corrected": "the erratum's negative 'as printed' column (documented)",
    P2 + "corollary41.claim_values": "the erratum's negative 'as printed' value (documented)",
    P2 + "fig3.tau_slopes": "log-log slopes",
    P2 + "soundness.g_second_differences": "second differences",
    P2 + "soundness.order_checks": "margins (negative when a property fails)",
    P2 + "fig3.claim_values": "read from its input table",
    P2 + "fig3.end_values": "read from its input table",
    P1 + "analysis.privacy_cost": "a difference of errors; NaN when ε was not tested (documented)",
    P1 + "analysis.naive_gain": "1 − relative RMSE; NaN when ε was not tested (documented)",
    P1 + "analysis.insurance_claims": "carries naive_gain and privacy_cost",
    P1 + "analysis.obesity_claims": "relative gains (signed)",
    P1 + "analysis.selected_summary": "read from its input table",
}
#: Functions that may return NaN, with the documented meaning.
NAN_OK: dict[str, str] = {
    P1 + "analysis.privacy_cost": "NaN when ε was not tested (documented)",
    P1 + "analysis.naive_gain": "NaN when ε was not tested (documented)",
    P1 + "analysis.insurance_claims": "carries naive_gain and privacy_cost",
    P1 + "analysis.selected_summary": "carries its input's missing clip values",
}
#: Functions that may return ∞, with where it is documented.
INF_OK: dict[str, str] = {
    A + "records.AccountantChoice": "sensitivity = ∞ is accepted by its own validation (allow_inf)",
    A + "fdp.Gaussian": "mu = ∞ is G_∞, no privacy left (docstring)",
    A + "fdp.clt_factor": "∞ when it overflows, σ ≲ 0.04 (docstring)",
    A + "fdp.clt_mu": "∞ when μ overflows (docstring)",
    A + "gaussian.epsilon_from_mu": "∞ for μ = ∞ (docstring) and where ε overflows the double range",
    A + "fdp.mu_to_epsilon": "as gaussian.epsilon_from_mu",
    A + "LabelledEpsilon": "value in [0, inf] (docstring)",
    P1 + "accounting.mbsgd_epsilon": "∞ for noise_std = 0 and δ below the PLD's mass at infinite loss (docstring)",
    P1 + "accounting.local_sgd_epsilon": "as mbsgd_epsilon (docstring)",
    P1 + "accounting.one_pass_epsilon": "∞ where μ = sensitivity/σ overflows (docstring)",
    P1 + "accounting.batch_mean_epsilon_upper": "∞ for noise_std = 0 (docstring) and where ε overflows",
    P0 + "calculator.gamma_rhs_alpha": "∞ outside the domain of F (docstring)",
    P0 + "calculator.gamma_rhs": "∞ outside the domain of F (docstring)",
    P0 + "calculator.gdp_epsilon": "∞ where the CLT's μ overflows (docstring)",
    P0 + "moments.moments_epsilon": "∞ when no order λ is admissible (docstring)",
    P0 + "moments.lemma_b3_bound": "∞ where λ is not admissible (docstring)",
    P0 + "moments.theorem_b2": "u0, u1, sigma_required = ∞ where the theorem does not apply (docstring)",
    P4 + "contraction.sensitivity_ratio": "∞ where 2L/(√m σ) overflows (docstring: θ_ε(∞) = 1)",
    P4 + "contraction.contraction_ratio": "∞ where the ratio overflows or radius = ∞ (docstring)",
    P3 + "bounds.a0_epsilon": "∞ where the CLT's μ overflows (σ tiny) or δ is below the PLD's mass at ∞ (docstring)",
    P3 + "bounds.a0_tradeoff": "μ = ∞ where the CLT's μ overflows (docstring)",
    P3 + "tables.table_1_2_rows": "ε = ∞ of a vacuous bound (module docstring)",
    P3 + "tables.a0_a1_rows": "ε = ∞ where the CLT's μ overflows (module docstring)",
    P3 + "tables.group_rows": "ε = ∞ where the CLT's μ overflows (module docstring)",
    P4 + "baselines.poisson_pld_epsilon": "∞ when δ is below the PLD's mass at infinite loss (docstring)",
}

#: (function, parameter) -> the defect, for failures in files owned elsewhere (temporary; see the module doc).
XFAIL: dict[tuple[str, str], str] = {}


# --------------------------------------------------------------------------- bad values
class _Unset:
    """Marker: the parameter is left to its default."""


#: Tried in every parameter of every function: the extremes and the types of issue 26 §4.
SPECIALS: tuple = (
    math.nan, math.inf, -math.inf, 1e308, -1e308, 1e-308, 5e-324, 0.0, -1, 10**30,
    True, "abc", "1.5", None, 1 + 2j, complex(1.0, 0.0), np.float64(math.nan), np.int64(-3), np.bool_(True),
)  # fmt: skip

#: Values every number parameter must refuse without computing anything (types, NaN, ±∞ unless documented).
REFUSED = st.one_of(
    st.booleans(),
    st.text(max_size=4),
    st.none(),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, -math.inf, np.float64(math.nan), np.bool_(False)]),
)
#: Arbitrary values: the above plus any float, integer (huge ones included) and numpy scalar.
VALUES = st.one_of(
    REFUSED,
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True).map(np.float64),
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(np.int64),
)
#: Functions whose valid base call costs more than ~0.1 s: hypothesis draws only from :data:`REFUSED` for them
#: (the extremes of :data:`SPECIALS` are still tried), which keeps the file within about a minute of CPU.
COSTLY = {
    A + "dpsgd.dpsgd_noise_multiplier", A + "dpsgd.epsilon_curve", A + "modelmix.noise_multiplier_for_epsilon",
    A + "pld.pld_noise_multiplier", A + "fdp.pld_gaussian_delta", A + "fdp.tradeoff_to_epsilon",
    A + "fdp.subsampled_gaussian_tradeoff", A + "rdp.rdp_curve", A + "pld.pld_epsilon", A + "pld.pld_delta",
    A + "dpsgd.dpsgd_epsilon", A + "records.epsilon_for_record",
    P1 + "accounting.mbsgd_epsilon", P1 + "accounting.local_sgd_epsilon", P1 + "accounting.with_replacement_pld",
    P1 + "accounting.mixture_pld", P1 + "accounting.mixture_pld_pmf",
    P2 + "corollary41.corollary41_epsilon", P2 + "corollary41.fig3_printed_vs_corrected",
    P2 + "fig3.amplification_curves", P2 + "fig3.tau_sweep", P2 + "fig3.tau_slopes", P2 + "fig3.p_sweep",
    P2 + "fig3.literal_units", P2 + "section5.transfer_epsilon", P2 + "section5.transfer_claim_values",
    P2 + "section5.authors_cifar10", P2 + "soundness.split_epsilons", P2 + "soundness.direction_ratios",
    P3 + "tables.a0_a1_rows", P3 + "tables.containment_rows", P3 + "tables.group_rows",
    P4 + "baselines.baseline_deltas", P4 + "baselines.gaussian_pld_delta", P4 + "baselines.wor_rdp_epsilon",
    P4 + "baselines.poisson_pld_epsilon",
}  # fmt: skip


class CallTimeout(Exception):
    """A call used more than :data:`CALL_TIMEOUT` seconds of CPU."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def _raise(signum, frame):  # noqa: ARG001
        raise CallTimeout(f"no answer within {seconds} s of CPU")

    old = signal.signal(signal.SIGPROF, _raise)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _call(key: str, kwargs: dict[str, Any]) -> Any:
    fn = PUBLIC[key]
    kwargs = {k: v for k, v in kwargs.items() if v is not _Unset}
    args = ()
    for name, p in _parameters(key).items():
        if p.kind is inspect.Parameter.VAR_POSITIONAL and name in kwargs:
            args = tuple(kwargs.pop(name))
    with _deadline(CALL_TIMEOUT):
        return fn(*args, **kwargs)


def _parameters(key: str) -> dict[str, inspect.Parameter]:
    params = inspect.signature(PUBLIC[key]).parameters
    return {n: p for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD and not n.startswith("_")}


# --------------------------------------------------------------------------- the oracle
def _bad_numbers(x: Any, *, signed: bool, nan_ok: bool, inf_ok: bool, path: str = "") -> list[str]:
    """Descriptions of the numbers in ``x`` that are NaN, ∞ or negative where not allowed."""
    if isinstance(x, (bool, np.bool_, str, bytes)) or x is None:
        return []
    if isinstance(x, numbers.Number) or isinstance(x, np.generic):
        if isinstance(x, complex) or np.iscomplexobj(x):
            return [f"{path}: complex {x!r}"]
        if isinstance(x, int) and x > 2**1000:  # a Python integer beyond the floats (a record's exact n = 2^k)
            return []
        v = float(x)
        if math.isnan(v):
            return [] if nan_ok else [f"{path}: NaN"]
        if math.isinf(v) and not inf_ok and not (signed and v < 0):
            return [f"{path}: {v}"]
        if v < 0 and not signed:
            return [f"{path}: negative {v!r}"]
        return []
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            return [
                e
                for i, item in enumerate(x.ravel())
                for e in _bad_numbers(item, signed=signed, nan_ok=nan_ok, inf_ok=inf_ok, path=f"{path}[{i}]")
            ]
        if x.dtype.kind in "biuf":
            return [
                e
                for i, v in enumerate(x.ravel()[:50])
                for e in _bad_numbers(v, signed=signed, nan_ok=nan_ok, inf_ok=inf_ok, path=f"{path}[{i}]")
            ]
        return [f"{path}: array of dtype {x.dtype}"] if x.dtype.kind == "c" else []
    if isinstance(x, pd.DataFrame):
        return [
            e
            for c in x.columns
            for e in _bad_numbers(x[c].to_numpy(), signed=signed, nan_ok=nan_ok, inf_ok=inf_ok, path=f"{path}[{c!r}]")
        ]
    if isinstance(x, pd.Series):
        return _bad_numbers(x.to_numpy(), signed=signed, nan_ok=nan_ok, inf_ok=inf_ok, path=path)
    if isinstance(x, dict):
        return [
            e
            for k, v in x.items()
            for e in _bad_numbers(v, signed=signed, nan_ok=nan_ok, inf_ok=inf_ok, path=f"{path}[{k!r}]")
        ]
    if isinstance(x, (list, tuple)):
        return [
            e
            for i, v in enumerate(x)
            for e in _bad_numbers(v, signed=signed, nan_ok=nan_ok, inf_ok=inf_ok, path=f"{path}[{i}]")
        ]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [
            e
            for f in dataclasses.fields(x)
            for e in _bad_numbers(
                getattr(x, f.name), signed=signed, nan_ok=nan_ok, inf_ok=inf_ok, path=f"{path}.{f.name}"
            )
        ]
    return []  # opaque (callables, dp_accounting objects)


def _kind(key: str, name: str, base_value: Any) -> str:
    """The kind of a parameter for the strict type rules: "number", "flag" or "other"."""
    p = _parameters(key)[name]
    value = p.default if base_value is _Unset else base_value
    if isinstance(value, (bool, np.bool_)):
        return "flag"
    if isinstance(value, (numbers.Real, np.integer, np.floating)):
        return "number"
    if value is None or value is inspect.Parameter.empty:
        note = str(p.annotation)
        if re.fullmatch(r"(int|float)( \| (int|float))*( \| None)?", note):
            return "number"
    return "other"


def _must_refuse(kind: str, value: Any, none_ok: bool) -> bool:
    if kind == "number":
        if value is None:
            return not none_ok
        return isinstance(value, (bool, np.bool_, str, complex)) or isinstance(value, np.complexfloating)
    if kind == "flag":
        return not isinstance(value, (bool, np.bool_))
    return False


def check_one(key: str, name: str, value: Any) -> str | None:
    """None when the call with ``name=value`` behaves, else what went wrong."""
    base = dict(_BASE[key])
    base_value = base.get(name, _Unset)
    kind = _kind(key, name, base_value)
    param = _parameters(key)[name]
    none_ok = param.default is None or base_value is None or "None" in str(param.annotation)
    if _parameters(key)[name].kind is inspect.Parameter.VAR_POSITIONAL:
        base[name] = (value, *tuple(base[name])[1:])
    else:
        base[name] = value
    try:
        result = _call(key, base)
    except CallTimeout as exc:
        return f"{name}={value!r}: {exc}"
    except (ValueError, TypeError) as exc:
        if _names(str(exc), name):
            return None
        return f"{name}={value!r}: {type(exc).__name__} without the parameter's name: {str(exc)[:200]}"
    except Exception as exc:  # noqa: BLE001 - any other exception is what this test looks for
        return f"{name}={value!r}: {type(exc).__name__}: {str(exc)[:200]}"
    if _must_refuse(kind, value, none_ok):
        return f"{name}={value!r}: accepted ({kind} parameter), returned {_short(result)}"
    bad = _bad_numbers(result, signed=key in SIGNED, nan_ok=key in NAN_OK, inf_ok=key in INF_OK)
    if bad:
        return f"{name}={value!r}: returned {bad[:3]}"
    return None


def _names(message: str, name: str) -> bool:
    """Whether ``message`` names the parameter as a word (``async_`` may appear as ``async``)."""
    return any(
        re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", message) for word in {name, name.rstrip("_")}
    )


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) < 80 else text[:77] + "..."


_BASE = _base()


def _marks(key: str, name: str) -> list:
    if (key, name) not in XFAIL:
        return []
    reason = XFAIL[(key, name)]
    return [pytest.mark.xfail(reason=reason, strict=False, run=not reason.startswith("slow"))]


CASES = [
    pytest.param(key, name, id=f"{key.removeprefix('dpcore.')}:{name}", marks=_marks(key, name))
    for key in PUBLIC
    if key not in SKIP
    for name in _parameters(key)
]


# --------------------------------------------------------------------------- tests
def test_every_public_function_is_covered_or_skipped_with_a_reason():
    missing = sorted(set(PUBLIC) - set(_BASE) - set(SKIP))
    assert not missing, f"add a valid base (or a reason to skip) for {missing}"
    stale = sorted((set(_BASE) | set(SKIP)) - set(PUBLIC))
    assert not stale, f"not public any more: {stale}"


@pytest.mark.parametrize("key", [k for k in PUBLIC if k not in SKIP], ids=lambda k: k.removeprefix("dpcore."))
def test_the_valid_base_call_answers(key):
    result = _call(key, _BASE[key])
    assert not _bad_numbers(result, signed=key in SIGNED, nan_ok=key in NAN_OK, inf_ok=key in INF_OK)


def test_the_fuzzed_count_is_reported():
    """The number of public functions this file fuzzes (issue 26 asks for it in the note)."""
    fuzzed = [k for k in PUBLIC if k not in SKIP]
    assert len(fuzzed) >= 200, len(fuzzed)
    assert len(CASES) >= 900, len(CASES)


@pytest.mark.parametrize(("key", "name"), CASES)
def test_one_bad_parameter_is_refused_or_answered(key, name):
    for value in SPECIALS:  # stop at the first failure: one message per case
        failure = check_one(key, name, value)
        assert failure is None, f"{key}: {failure}"
    _fuzz(key, name)


def _fuzz(key: str, name: str) -> None:
    @settings(max_examples=3, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(value=REFUSED if key in COSTLY else VALUES)
    def run(value):
        failure = check_one(key, name, value)
        assert failure is None, f"{key}: {failure}"

    run()


# --------------------------------------------------------------------------- the cases issue 26 names
def _named(call: Callable[[], Any]) -> tuple[Any, float]:
    start = time.process_time()
    with _deadline(4 * CALL_TIMEOUT):
        out = call()
    return out, time.process_time() - start


def _import(key: str) -> Callable:
    module, _, name = key.rpartition(".")
    return getattr(importlib.import_module(module), name)


_P4KW = dict(n=100, batch_size=10, eta=0.5, sigma=1.5)
#: (function, keyword arguments, the parameter a refusal must name, or None when an answer is expected).
NAMED_REFUSALS = [
    (P1 + "accounting.mbsgd_epsilon", dict(_BASE[P1 + "accounting.mbsgd_epsilon"], rounds=10**9), "rounds"),
    (P1 + "accounting.noise_std", dict(ISRL, batch_size=None), "batch_size"),
    (P1 + "accounting.noise_std", dict(ISRL, rounds=True), "rounds"),
    (P1 + "accounting.noise_std", dict(ISRL, epsilon="1.5"), "epsilon"),
    (P3 + "bounds.a0_epsilon", dict(_BASE[P3 + "bounds.a0_epsilon"], sigma="abc"), "sigma"),
    (P3 + "bounds.a0_epsilon", dict(_BASE[P3 + "bounds.a0_epsilon"], sigma=1 + 2j), "sigma"),
    (P3 + "bounds.a0_epsilon", dict(_BASE[P3 + "bounds.a0_epsilon"], sigma=1e308), "sigma"),
    (P3 + "bounds.a0_epsilon", dict(_BASE[P3 + "bounds.a0_epsilon"], sigma=1e-308), "sigma"),
    (P3 + "bounds.a0_epsilon", dict(_BASE[P3 + "bounds.a0_epsilon"], E=True), "E"),
    (P4 + "contraction.theta", dict(epsilon=math.nan, r=1.0), "epsilon"),
    (P4 + "contraction.last_iterate_delta", dict(_P4KW, epsilon=1.0, sigma=1e-308), None),
    (P4 + "contraction.last_iterate_delta", dict(_P4KW, epsilon=1.0, n=10**30), None),
    (P4 + "baselines.poisson_rdp_epsilon", dict(_BASE[P4 + "baselines.poisson_rdp_epsilon"], sigma=1e308), "sigma"),
    (P4 + "baselines.poisson_pld_epsilon", dict(_BASE[P4 + "baselines.poisson_pld_epsilon"], sigma=1e-308), "sigma"),
    (P4 + "baselines.wor_rdp_epsilon", dict(_BASE[P4 + "baselines.wor_rdp_epsilon"], lipschitz=1e-308), "lipschitz"),
    (P2 + "corollary41.corollary41_epsilon", dict(_BASE[P2 + "corollary41.corollary41_epsilon"], tau=1e308), "tau"),
    (A + "dpsgd.epsilon_curve", dict(_BASE[A + "dpsgd.epsilon_curve"], steps=5), "steps"),
    # defects of dpcore.accounting found by this file, owned elsewhere (temporary xfails, see XFAIL):
    (A + "rdp.rdp_to_epsilon", dict(_BASE[A + "rdp.rdp_to_epsilon"], delta=5e-324, conversion="mironov"), None),
    (A + "modelmix.epsilon", dict(_BASE[A + "modelmix.epsilon"], setting=_mm_setting(linf_blocks=25,
     noise_multiplier=1e308)), "noise_multiplier"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("key", "kwargs", "name"), NAMED_REFUSALS, ids=lambda v: v.removeprefix("dpcore.") if isinstance(v, str) else "-"
)
def test_the_cases_issue_26_names_answer_or_refuse_within_two_seconds(key, kwargs, name):
    fn = _import(key)
    if name is None:
        out, seconds = _named(lambda: fn(**kwargs))
        assert not _bad_numbers(out, signed=False, nan_ok=False, inf_ok=False), out
    else:
        start = time.process_time()
        with pytest.raises(ValueError) as info, _deadline(4 * CALL_TIMEOUT):
            fn(**kwargs)
        seconds = time.process_time() - start
        assert _names(str(info.value), name), str(info.value)
    # the _deadline of 4 CALL_TIMEOUT s of CPU is the hang guard; the goal (two seconds) is benchmarks/latency.py's
    print(f"{key}: {seconds:.2f} s of CPU")


def test_the_silent_answers_issue_26_names_are_documented_values():
    from dpcore.papers.p001_isrl.accounting import mbsgd_epsilon
    from dpcore.papers.p004_contraction.contraction import theta

    assert theta(1e308, 1.0) == 0.0  # was NaN: δ of an ε beyond the double range is 0
    assert theta(1.0, math.inf) == 1.0  # θ_ε(∞) = 1 (documented: unbounded distance, no guarantee)
    kw = dict(_BASE[P1 + "accounting.mbsgd_epsilon"])
    assert mbsgd_epsilon(**dict(kw, noise_std=0.0)) == math.inf  # documented: no noise, no finite ε
    assert "noise_std=0" in mbsgd_epsilon.__doc__


def test_pld_calibration_at_a_large_delta_answers_within_a_few_seconds():
    # 3.1 s of CPU measured alone, 5.6 s beside a second test worker (2026-11-27): σ ≈ 0.22 at δ = 0.5 makes each
    # fine PLD evaluation expensive; bounded (not a hang), though above the one-call budget of the other cases
    # bounded by _named's deadline (4 CALL_TIMEOUT s of CPU: a hang guard), not by a speed limit (issue 54)
    calibrate = _import(A + "pld.pld_noise_multiplier")
    sigma, seconds = _named(lambda: calibrate(2.0, sample_rate=0.01, steps=100, delta=0.5))
    assert 0 < sigma < math.inf, (sigma, seconds)


#: The skipped functions whose valid base is expensive but whose inputs are still checked before any work.
EXPENSIVE = [k for k in SKIP if k in _BASE and k in PUBLIC]
TYPE_CASES = [
    pytest.param(key, name, id=f"{key.removeprefix('dpcore.')}:{name}")
    for key in EXPENSIVE
    for name in _parameters(key)
    if _kind(key, name, _BASE[key].get(name, _Unset)) in ("number", "flag")
]


@pytest.mark.parametrize(("key", "name"), TYPE_CASES)
def test_expensive_functions_refuse_bad_types(key, name):
    """A value no number or flag parameter may take is refused before any accountant runs."""
    for value in (math.nan, "abc", None, 1 + 2j, np.bool_(True)):
        if value is None and _parameters(key)[name].default is None:
            continue
        failure = check_one(key, name, value)
        assert failure is None, f"{key}: {failure}"
