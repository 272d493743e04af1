"""Paper 002's toys: Fig. 1 from a real ModelMix trajectory (Algorithm 1) and Example 3.1's clipped descent."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.papers.p002_modelmix import toys
from dpcore.papers.p002_modelmix.claims import CLAIMS

H, OPT = ((1.0, 0.3), (0.3, 0.6)), (0.0, 0.0)


def test_fig1_trace_has_the_properties_the_figure_shows():
    trace = toys.fig1_trace()
    assert trace.states.shape == (toys.FIG1["steps"] + 2, 2)
    assert trace.corners.shape == (toys.FIG1["steps"], 2, 2) and trace.mixed.shape == (toys.FIG1["steps"], 2)
    assert toys.fig1_checks(trace) == dict.fromkeys(toys.fig1_checks(trace), True)
    assert set(toys.fig1_checks(trace)) <= set(CLAIMS)


def test_fig1_checks_catch_violations():
    trace = toys.fig1_trace()
    outside = toys.ModelMixTrace(trace.states, trace.corners, trace.alpha, trace.mixed + 10.0, trace.update, trace.tau)
    assert not toys.fig1_checks(outside)["fig1.mixed_in_envelope"]
    assert not toys.fig1_checks(outside)["fig1.step_from_mixed"]
    wide = toys.ModelMixTrace(trace.states, trace.corners, trace.alpha, trace.mixed, trace.update, 100.0)
    assert not toys.fig1_checks(wide)["fig1.gap_at_least_tau"]


def test_algorithm1_by_hand_one_step():
    """w_{-1} = w_0 (gap 0 < τ): lines 6–8 push them τ/2 apart (sign(0) = +1); then eq. (9)."""
    tr = toys.modelmix_trajectory(H, OPT, (1.0, -1.0), (1.0, -1.0), steps=1, lr=0.5, tau=0.2, seed=7)
    a, b = tr.corners[0]
    np.testing.assert_allclose(a, [1.1, -0.9])
    np.testing.assert_allclose(b, [0.9, -1.1])
    rng = np.random.default_rng(7)
    rng.standard_normal(2)  # the run draws the gradient noise first (scaled by noise = 0 here), then α
    alpha = rng.uniform(size=2)
    grad = np.array([[1.0, 0.3], [0.3, 0.6]]) @ np.array([1.0, -1.0])  # at the unmixed w_0
    np.testing.assert_allclose(tr.states[2], alpha * a + (1 - alpha) * b - 0.5 * grad, rtol=1e-12)


def test_noiseless_modelmix_with_small_tau_converges():
    tr = toys.modelmix_trajectory(H, OPT, (-3.0, 2.0), (-2.5, 2.0), steps=300, lr=0.5, tau=1e-3, seed=1)
    assert np.linalg.norm(tr.states[-1]) < 0.05
    assert np.linalg.norm(tr.states[-1]) < 0.01 * np.linalg.norm(tr.states[1])


def test_tau_zero_without_noise_and_equal_states_is_gradient_descent():
    """With w_{-1} = w_0 and τ = 0 nothing is pushed and mixing equal points is the identity at step 1."""
    tr = toys.modelmix_trajectory(H, OPT, (2.0, 1.0), (2.0, 1.0), steps=1, lr=0.3, tau=0.0)
    expected = np.array([2.0, 1.0]) - 0.3 * (np.array([[1.0, 0.3], [0.3, 0.6]]) @ np.array([2.0, 1.0]))
    np.testing.assert_allclose(tr.states[2], expected, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(tau=st.floats(0.0, 2.0), seed=st.integers(0, 10_000), noise=st.floats(0.0, 3.0))
def test_envelope_properties_hold_for_any_run(tau, seed, noise):
    tr = toys.modelmix_trajectory(H, OPT, (-1.0, 1.0), (0.5, 0.2), steps=6, lr=0.4, tau=tau, noise=noise, seed=seed)
    assert all(toys.fig1_checks(tr, atol=1e-9).values())


def test_mixing_mean_is_the_midpoint(monkeypatch):
    np.testing.assert_allclose(toys.mixing_mean([0.0, 1.0], [2.0, 5.0], draws=40_000), [1.0, 3.0], atol=0.05)
    trace = toys.fig1_trace()
    assert toys.mixing_mean_check(trace)
    # a biased mixing rule (α ~ U[0, 1]² instead of U[0, 1]: mean 1/3, not 1/2) fails the check
    def biased(a, b, *, draws, seed):
        alpha = np.random.default_rng(seed).uniform(size=(draws, len(a))) ** 2
        return (alpha * np.asarray(a) + (1 - alpha) * np.asarray(b)).mean(axis=0)

    monkeypatch.setattr(toys, "mixing_mean", biased)
    assert not toys.mixing_mean_check(trace)
    monkeypatch.undo()
    with pytest.raises(ValueError, match="draws"):
        toys.mixing_mean([0.0], [1.0], draws=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"steps": 0}, "steps"),
        ({"lr": 0.0}, "lr"),
        ({"tau": -1.0}, "tau"),
        ({"noise": -0.1}, "noise"),
        ({"w0": (1.0, 2.0, 3.0)}, "w0"),
        ({"hessian": ((1.0, 2.0), (2.0, 1.0))}, "hessian"),
    ],
)
def test_modelmix_trajectory_validates(kwargs, match):
    args = {"hessian": H, "optimum": OPT, "w_minus1": (0.0, 0.0), "w0": (1.0, 1.0), "steps": 2, "lr": 0.1,
            "tau": 0.1} | kwargs  # fmt: skip
    with pytest.raises(ValueError, match=match):
        toys.modelmix_trajectory(args.pop("hessian"), args.pop("optimum"), args.pop("w_minus1"), args.pop("w0"),
                                 **args)  # fmt: skip
    with pytest.raises(ValueError, match="unknown"):
        toys.fig1_trace(colour="red")


# ---- Example 3.1 -------------------------------------------------------------------------------------------
def test_example31_limits():
    assert toys.clipped_limit(1.0) == pytest.approx(-10.0, abs=1e-9)  # the median
    assert toys.clipped_limit(100.0) == pytest.approx(20.0, abs=1e-9)  # the optimum
    assert toys.clipped_limit(60.0) == pytest.approx(15.0, abs=1e-9)  # (w + 20) + (w + 10) − 60 = 0
    assert toys.smallest_unbiased_clip() == pytest.approx(70.0, abs=1e-6)
    limits = [toys.clipped_limit(c) for c in np.linspace(0.5, 120, 50)]
    assert np.all(np.diff(limits) >= -1e-9)  # the bias shrinks monotonically with c here


def test_clipped_gd_ends_at_the_limit_from_every_start():
    for w0 in (-50.0, 0.0, 20.0, 150.0):
        assert toys.clipped_gd_path(w0, clip=1.0, lr=0.5, steps=2000)[-1] == pytest.approx(-10.0, abs=1e-6)
        assert toys.clipped_gd_path(w0, clip=100.0, lr=0.5, steps=200)[-1] == pytest.approx(20.0, abs=1e-6)
    # started at the optimum, c = 1 walks away from it (expected clipped gradient 1/3 there)
    path = toys.clipped_gd_path(20.0, clip=1.0, lr=0.5, steps=1)
    assert path[1] == pytest.approx(20.0 - 0.5 / 3)


def test_clipped_sgd_tracks_the_limit():
    c1 = toys.clipped_sgd_path(0.0, clip=1.0, lr=0.1, steps=2000, batch=16, seed=0)
    c100 = toys.clipped_sgd_path(0.0, clip=100.0, lr=0.1, steps=2000, batch=16, seed=1)
    assert abs(c1[-500:].mean() + 10.0) < 0.5
    assert abs(c100[-1000:].mean() - 20.0) < 2.0
    np.testing.assert_array_equal(c1, toys.clipped_sgd_path(0.0, clip=1.0, lr=0.1, steps=2000, batch=16, seed=0))


def test_example31_sampled_reproduces_the_printed_numbers():
    values = toys.example31_sampled(draws=50_000)
    assert set(values) <= set(CLAIMS)
    assert values["ex3.1.sim.sampled_grad_std"] == pytest.approx(49.67, abs=0.5)
    assert values["ex3.1.sim.sampled_clipped_grad.w20"] == pytest.approx(1 / 3, abs=0.02)
    assert values["ex3.1.sim.sampled_clipped_grad.w0"] == pytest.approx(1 / 3, abs=0.02)
    with pytest.raises(ValueError, match="draws"):
        toys.example31_sampled(draws=1)


def test_example31_simulation_values_match_the_claims():
    values = toys.example31_simulation()
    assert set(values) <= set(CLAIMS)
    assert values["ex3.1.sim.limit.c1"] == pytest.approx(-10.0, abs=1e-6)
    assert values["ex3.1.sim.limit.c100"] == pytest.approx(20.0, abs=1e-6)
    assert values["ex3.1.sim.c1.wrong_from_every_start"] is True
    assert values["ex3.1.sim.smallest_unbiased_clip"] == pytest.approx(70.0, abs=1e-6)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: toys.clipped_limit(0.0), "clip"),
        (lambda: toys.clipped_limit(1.0, xs=[]), "xs"),
        (lambda: toys.clipped_gd_path(float("nan"), clip=1.0, lr=0.1, steps=2), "w0"),
        (lambda: toys.clipped_sgd_path(0.0, clip=1.0, lr=0.1, steps=2, batch=0), "batch"),
        (lambda: toys.example31_tables(clips=[1.0, -2.0]), "clips"),
        (lambda: toys.smallest_unbiased_clip(tol=0.0), "tol"),
    ],
)
def test_example31_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_figures_draw():
    import matplotlib.pyplot as plt

    fig = toys.fig1_figure(toys.fig1_trace())
    assert len(fig.axes) == 1
    limits, paths = toys.example31_tables(clips=[1.0, 50.0, 100.0])
    assert set(paths) == {"c=1,w0=0", "c=1,w0=20", "c=100,w0=0", "c=100,w0=20"}
    fig2 = toys.example31_figure(limits, paths)
    assert len(fig2.axes) == 4  # three panels + the twin axis of (a)
    plt.close("all")


def test_trace_table():
    trace = toys.fig1_trace()
    table = toys.trace_table(trace)
    assert len(table) == toys.FIG1["steps"] and table["k"].tolist() == list(range(1, toys.FIG1["steps"] + 1))
    np.testing.assert_allclose(table[["w_k_1", "w_k_2"]].to_numpy(), trace.states[2:])
    three = toys.modelmix_trajectory(np.eye(3), (0, 0, 0), (1, 1, 1), (0, 0, 0), steps=2, lr=0.1, tau=0.1)
    with pytest.raises(ValueError, match="2-D"):
        toys.trace_table(three)
