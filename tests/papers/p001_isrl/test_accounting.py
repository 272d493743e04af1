"""ISRL-DP noise calibrations (paper 001) and the tight with-replacement accountant."""

import math

import numpy as np
import pytest
from dp_accounting import dp_event, pld
from scipy import integrate, stats

from dpcore.accounting import gaussian as gdp
from dpcore.papers.p001_isrl import accounting as isrl

MNIST_DELTA = 1 / 1238**2


# ----------------------------------------------------------------------------- calibrations, hand-computed


def test_experiments_formula_by_hand():
    # App. I: σ² = 8 L² ln(1/δ) R / (n² ε²); L = 2, R = 35, n = 1238, ε = 18, δ = 1/1238²
    # ln(1238²) = 14.242508..., so σ² = 8·4·14.242508·35 / (1238²·324) = 15951.609 / 496576656
    sigma = isrl.noise_std(lipschitz=2.0, rounds=35, n=1238, epsilon=18.0, delta=MNIST_DELTA, batch_size=443)
    assert sigma**2 == pytest.approx(15951.6090 / 496576656, rel=1e-6)
    assert sigma == pytest.approx(0.00566769, rel=1e-5)


def test_theory_formula_by_hand():
    # Thm D.1: σ² = 256 L² R ln(2.5R/δ) ln(2/δ) / (n² ε²); L = 1, R = 10, n = 100, ε = 1, δ = 1e-4
    # ln(2.5e5) = 12.429216, ln(2e4) = 9.903488 -> σ² = 256·10·12.429216·9.903488 / 1e4 = 31.51185
    var = isrl.noise_variance(lipschitz=1.0, rounds=10, n=100, epsilon=1.0, delta=1e-4, batch_size=5, formula="theory")
    assert var == pytest.approx(31.51185, rel=1e-5)


def test_local_sgd_and_one_pass_formulas_by_hand():
    # App. I: σ² = 8 L² R K ln(1/δ) / (ε² n²) with L = 1, R = 35, K = 19, n = 134, ε = 1, δ = 1/134²
    # ln(134²) = 9.795690 -> σ² = 8·35·19·9.795690 / 17956 = 2.902262
    s = isrl.local_sgd_noise_std(lipschitz=1.0, rounds=35, n=134, epsilon=1.0, delta=1 / 134**2, batch_size=19)
    assert s**2 == pytest.approx(2.902262, rel=1e-5)
    # Thm E.1: σ² = 32 L² ln(1.25/δ) / (ε² K²) with L = 2, ε = 2, δ = 1e-5, K = 10: 32·4·11.736069/400 = 3.755542
    s = isrl.one_pass_noise_std(lipschitz=2.0, epsilon=2.0, delta=1e-5, batch_size=10)
    assert s**2 == pytest.approx(3.755542, rel=1e-5)


def test_derived_constants_of_the_note():
    assert isrl.batch_size_experiments(1238, 35, 18) == 443  # MNIST
    assert [isrl.batch_size_experiments(n, 35, 3) for n in (134, 446, 268, 90)] == [19, 65, 39, 13]  # insurance
    assert isrl.batch_size_experiments(202, 100, 9) == 30  # obesity
    assert isrl.moments_accountant_epsilon_limit(MNIST_DELTA) == pytest.approx(28.485009812978166, rel=1e-12)
    assert isrl.moments_accountant_epsilon_limit(1 / 202**2) == pytest.approx(21.23, abs=5e-3)
    assert isrl.variance_ratio_theory_to_experiments(35, MNIST_DELTA) == pytest.approx(628, abs=0.5)
    assert isrl.variance_ratio_theory_to_experiments(35, 1 / 134**2) == pytest.approx(489, abs=0.5)
    assert isrl.batch_size_theory_min(1238, 35, 18, MNIST_DELTA) == 173  # ε n/(4 sqrt(2R ln(2/δ))) = 172.3


def test_theory_over_experiments_ratio_is_the_formula_ratio():
    kw = dict(lipschitz=3.0, rounds=35, n=1238, epsilon=6.0, delta=MNIST_DELTA, batch_size=443)
    ratio = isrl.noise_variance(**kw, formula="theory") / isrl.noise_variance(**kw, formula="experiments")
    assert ratio == pytest.approx(isrl.variance_ratio_theory_to_experiments(35, MNIST_DELTA), rel=1e-12)


def test_infinite_epsilon_means_no_noise():
    kw = dict(lipschitz=1.0, rounds=5, n=10, delta=1e-3, batch_size=3)
    assert isrl.noise_std(epsilon=math.inf, **kw) == 0.0
    assert isrl.local_sgd_noise_std(epsilon=math.inf, **kw) == 0.0


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(batch_size=11), "batch_size"),
        (dict(delta=1.0), "delta"),
        (dict(formula="moments"), "formula"),
        (dict(rounds=0), "rounds"),
        (dict(lipschitz=0.0), "lipschitz"),
    ],
)
def test_bad_calibration_input_names_the_parameter(kwargs, name):
    base = dict(lipschitz=1.0, rounds=5, n=10, epsilon=1.0, delta=1e-3, batch_size=3)
    with pytest.raises(ValueError, match=name):
        isrl.noise_std(**{**base, **kwargs})


# ----------------------------------------------------------------------------- tight accountant


@pytest.mark.parametrize("neighbours, sensitivity", [("replace-one", 2.0), ("add-remove", 1.0)])
def test_single_record_silo_is_a_plain_gaussian(neighbours, sensitivity):
    # n = K = 1: the record is always drawn, the gradient moves by ≤ L (2L): the Gaussian mechanism,
    # whose R-fold composition is μ-GDP with μ = sensitivity·√R/σ (exact).
    sigma, rounds, delta = 3.0, 9, 1e-5
    ours = isrl.mbsgd_epsilon(noise_std=sigma, lipschitz=1.0, batch_size=1, n=1, rounds=rounds, delta=delta,
                              neighbours=neighbours)
    exact = gdp.epsilon_from_mu(sensitivity * math.sqrt(rounds) / sigma, delta)
    assert ours == pytest.approx(exact, rel=2e-3)
    assert ours >= exact * (1 - 1e-6)  # pessimistic


def test_add_remove_matches_dp_accounting_mixture_of_gaussians():
    n, k, rounds, delta = 60, 12, 10, 1 / 60**2
    sigma = isrl.noise_std(lipschitz=1.0, rounds=rounds, n=n, epsilon=2.0, delta=delta, batch_size=k)
    counts = np.arange(k + 1)
    probs = stats.binom.pmf(counts, k, 1 / n)
    keep = probs > 1e-18
    event = dp_event.SelfComposedDpEvent(
        dp_event.MixtureOfGaussiansDpEvent(1.0, list(counts[keep] / (k * sigma)), list(probs[keep])), rounds
    )
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(event)
    reference = accountant.get_epsilon(delta)
    ours = isrl.mbsgd_epsilon(noise_std=sigma, lipschitz=1.0, batch_size=k, n=n, rounds=rounds, delta=delta,
                              neighbours="add-remove")
    assert ours == pytest.approx(reference, rel=3e-3)


def _delta_1d(eps, a, counts, probs):
    """Hockey-stick divergence of Σ b_c N(c a, 1) against Σ b_c N(−c a, 1) by quadrature."""

    def integrand(x):
        p = np.dot(probs, stats.norm.pdf(x - counts * a))
        q = np.dot(probs, stats.norm.pdf(x + counts * a))
        return max(p - math.exp(eps) * q, 0.0)

    return integrate.quad(integrand, -12, 12 + counts.max() * a, limit=400, points=[0.0])[0]


def test_replace_one_single_round_matches_quadrature():
    n, k, z = 20, 5, 0.4  # z = σ/L
    counts, probs = np.arange(k + 1.0), stats.binom.pmf(np.arange(k + 1), k, 1 / n)
    dist = isrl.with_replacement_pld(z, k, n, neighbours="replace-one")
    for eps in (0.1, 0.5, 1.0):
        exact = _delta_1d(eps, 1 / (k * z), counts, probs)
        ours = float(dist.get_delta_for_epsilon(eps))
        assert ours >= exact * (1 - 1e-7)
        assert ours == pytest.approx(exact, rel=2e-3, abs=1e-9)


def _delta_2d(eps, mu, mu_prime, counts, probs, h=0.02):
    """Hockey-stick divergence of Σ b_c N(c μ, I) against Σ b_c N(c μ', I) in 2-D on a grid."""
    span = counts.max() * 1.0 + 7
    g = np.arange(-span, span, h)
    x, y = np.meshgrid(g, g, indexing="ij")

    def mix(m):
        return sum(b * np.exp(-((x - c * m[0]) ** 2 + (y - c * m[1]) ** 2) / 2) / (2 * math.pi)
                   for c, b in zip(counts, probs, strict=True))

    return float(np.maximum(mix(mu) - math.exp(eps) * mix(mu_prime), 0).sum() * h * h)


def test_antipodal_gradients_are_the_worst_replace_one_pair():
    # Among pairs of gradients of norm ≤ L, the accountant uses g' = −g.  Check others in 2-D.
    n, k, z, eps = 10, 3, 0.5, 0.5
    counts, probs = np.arange(k + 1.0), stats.binom.pmf(np.arange(k + 1), k, 1 / n)
    a = 1 / (k * z)
    worst = _delta_2d(eps, (a, 0.0), (-a, 0.0), counts, probs)
    assert worst == pytest.approx(_delta_1d(eps, a, counts, probs), rel=1e-3)
    for angle in (0.5, 1.5, 2.5, 3.0):
        other = _delta_2d(eps, (a, 0.0), (a * math.cos(angle), a * math.sin(angle)), counts, probs)
        assert other <= worst + 1e-9
    for r1, r2 in ((1.0, 0.5), (0.5, 0.5), (1.0, 0.0)):
        assert _delta_2d(eps, (r1 * a, 0.0), (-r2 * a, 0.0), counts, probs) <= worst + 1e-9


def test_replace_one_is_weaker_than_add_remove_and_monotone_in_noise():
    kw = dict(lipschitz=1.0, batch_size=19, n=134, rounds=35, delta=1 / 134**2)
    eps = [isrl.mbsgd_epsilon(noise_std=s, **kw) for s in (0.1, 0.2, 0.4)]
    assert eps[0] > eps[1] > eps[2] > 0
    assert isrl.mbsgd_epsilon(noise_std=0.2, neighbours="add-remove", **kw) < eps[1]
    assert isrl.mbsgd_epsilon(noise_std=0.0, **kw) == math.inf


def test_mnist_calibration_audit():
    # App. I's σ with K = 443, R = 35, n = 1238: holds at ε = 0.75, fails at ε = 12 under replace-one.
    small = isrl.audit_calibration(setting="mnist", algorithm="mb-sgd", epsilon=0.75, n=1238, rounds=35, batch_size=443)
    assert small.holds and small.epsilon_add_remove < small.epsilon_replace_one < 0.75
    large = isrl.audit_calibration(setting="mnist", algorithm="mb-sgd", epsilon=12.0, n=1238, rounds=35, batch_size=443)
    assert not large.holds
    assert large.epsilon_replace_one == pytest.approx(13.03, abs=0.02)
    assert large.epsilon_add_remove == pytest.approx(8.13, abs=0.02)


def test_local_sgd_accountant_is_the_batch_one_mechanism():
    kw = dict(noise_std=2.0, lipschitz=1.0, n=50, delta=1e-4)
    assert isrl.local_sgd_epsilon(rounds=4, local_steps=5, **kw) == pytest.approx(
        isrl.mbsgd_epsilon(batch_size=1, rounds=20, **kw), rel=1e-12
    )


def test_one_pass_epsilon_is_exact_gaussian():
    sigma = isrl.one_pass_noise_std(lipschitz=1.0, epsilon=1.0, delta=1e-5, batch_size=10)
    eps = isrl.one_pass_epsilon(noise_std=sigma, lipschitz=1.0, batch_size=10, delta=1e-5)
    assert eps == pytest.approx(gdp.epsilon_from_mu(0.2 / sigma, 1e-5), rel=1e-9)
    assert eps < 1.0  # the printed calibration is (conservatively) valid


def test_calibration_hits_the_target():
    kw = dict(lipschitz=1.0, batch_size=10, n=100, rounds=10, delta=1e-4)
    sigma = isrl.calibrate_mbsgd_noise_std(target_epsilon=2.0, rtol=1e-3, **kw)
    assert isrl.mbsgd_epsilon(noise_std=sigma, **kw) <= 2.0
    assert isrl.mbsgd_epsilon(noise_std=sigma * 0.99, **kw) > 2.0


def test_shuffle_round_epsilon_by_hand():
    # n = 1, ε0 = 0.5, N = 10^6, δ = 1e-6: ln(1 + tanh(0.25)(8 sqrt(e^0.5 ln 4e6)/1000 + 8 e^0.5/1e6))
    inner = 8 * math.sqrt(math.exp(0.5) * math.log(4e6)) / 1e3 + 8 * math.exp(0.5) / 1e6
    expected = math.log1p(math.tanh(0.25) * inner)
    assert isrl.shuffle_round_epsilon(0.5, 1, 10**6, 1e-6) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="eps0"):
        isrl.shuffle_round_epsilon(5.0, 10, 1000, 1e-6)


def test_shuffled_noise_formula_by_hand():
    s = isrl.shuffled_noise_std(lipschitz=1.0, rounds=10, n=100, num_silos=50, silos_per_round=10, epsilon=1.0,
                                delta=1e-5, constant=2.0)
    logs = math.log(10 * 100 / (50 * 1e-5)) * math.log(10 / 1e-5) * math.log(1e5)
    assert s**2 == pytest.approx(2 * 10 * 10 * logs / (100**2 * 50**2), rel=1e-12)
    with pytest.raises(ValueError, match="silos_per_round"):
        isrl.shuffled_noise_std(lipschitz=1.0, rounds=10, n=100, num_silos=5, silos_per_round=10, epsilon=1.0,
                                delta=1e-5)


def test_bad_accountant_input_names_the_parameter():
    with pytest.raises(ValueError, match="neighbours"):
        isrl.mbsgd_epsilon(noise_std=1.0, lipschitz=1.0, batch_size=2, n=5, rounds=3, delta=1e-5, neighbours="swap")
    with pytest.raises(ValueError, match="batch_size"):
        isrl.mbsgd_epsilon(noise_std=1.0, lipschitz=1.0, batch_size=6, n=5, rounds=3, delta=1e-5)
    with pytest.raises(ValueError, match="noise_std"):
        isrl.mbsgd_epsilon(noise_std=-1.0, lipschitz=1.0, batch_size=2, n=5, rounds=3, delta=1e-5)
