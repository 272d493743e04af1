"""The paper explorers (``dpcore.papers.<paper>.explore``: 002, 003, 004, 000 and 001) show the paper packages'
numbers, and their widgets build."""

from __future__ import annotations

import math

import pytest

from dpcore.accounting import fdp
from dpcore.papers.p000_proactive import calculator as pdp
from dpcore.papers.p000_proactive import explore as proactive_explorer
from dpcore.papers.p001_isrl import accounting as isrl
from dpcore.papers.p001_isrl import explore as isrl_explorer
from dpcore.papers.p002_modelmix import explore as modelmix
from dpcore.papers.p002_modelmix.fig3 import FIG3, amplification_curves
from dpcore.papers.p003_shuffling import bounds as sh
from dpcore.papers.p003_shuffling import explore as shuffling
from dpcore.papers.p003_shuffling.tables import exact_mixture
from dpcore.papers.p004_contraction import explore as contraction
from dpcore.papers.p004_contraction.baselines import baseline_deltas


def test_modelmix_values_are_fig3_curves():
    view = modelmix.compute(tau=0.15, p=25, sigma=0.8, q=0.02, steps=1200)
    lib = amplification_curves([1200], n=FIG3["n"], batch_size=0.02 * FIG3["n"], noise_multiplier=0.8,
                               clip=FIG3["clip"], tau=0.15, delta=FIG3["delta"], linf_blocks=(None, 25))  # fmt: skip
    assert view.values["eps[regular]"] == pytest.approx(lib["regular DP-SGD"][0], rel=1e-12)
    assert view.values["eps[modelmix]"] == pytest.approx(lib["ModelMix"][0], rel=1e-12)
    assert view.values["eps[modelmix_p]"] == pytest.approx(lib["ModelMix p=25"][0], rel=1e-12)
    assert view.values["eps[modelmix]"] < view.values["eps[regular]"]
    with pytest.raises(ValueError, match="tau"):
        modelmix.compute(tau=5.0, p=25, sigma=0.8, q=0.02, steps=1200)


@pytest.mark.parametrize(("sampling", "clipping", "g"), [("shuffle", "batch", 2), ("fixed", "individual", 1)])
def test_shuffling_values_are_the_exact_mixture_and_the_a0_clt(sampling, clipping, g):
    view = shuffling.compute(sampling=sampling, clipping=clipping, g=g, E=5, sigma=2.0, batch=256, delta=1e-5)
    table, row = {("shuffle", "batch"): (1, 5), ("fixed", "individual"): (1, 2)}[(sampling, clipping)]
    mix = exact_mixture(table, row, sigma=2.0, E=5, N=shuffling.N, batch=256, g=g)
    assert view.values["eps[A1]"] == pytest.approx(mix.epsilon(1e-5), rel=1e-12)
    mu = fdp.group_gaussian(sh.a0_tradeoff(sigma=2.0, N=shuffling.N, batch=256, E=5).mu, g)
    assert view.values["eps[A0]"] == pytest.approx(fdp.mu_to_epsilon(mu, 1e-5), rel=1e-9)
    assert "approximate" in view.labels["eps[A0]"]


def test_shuffling_marks_what_it_cannot_compute():
    view = shuffling.compute(sampling="shuffle", clipping="individual", g=3, E=5, sigma=2.0, batch=256, delta=1e-5)
    assert math.isnan(view.values["eps[A1]"]) and any("g ≤ 2" in n for n in view.notes)
    with pytest.raises(ValueError, match="clipping"):
        shuffling.compute(sampling="shuffle", clipping="mixed", g=1, E=5, sigma=2.0, batch=256, delta=1e-5)


def test_contraction_values_are_the_baselines():
    view = contraction.compute(epsilon=1.5, rounds=50, radius=0.3, sigma=2.0, batch_size=5, eta=0.5)
    lib = baseline_deltas(1.5, n=250, batch_size=5, eta=0.5, sigma=2.0, radius=0.3)
    for key, value in lib.items():
        assert view.values[f"delta[{key}]"] == pytest.approx(float(value[0]), rel=1e-12), key
    assert math.isnan(contraction.compute(epsilon=1.0, rounds=2000, radius=1.0, sigma=1.5, batch_size=10,
                                          eta=0.5).values["delta[B4]"])  # fmt: skip
    with pytest.raises(ValueError, match="rounds"):
        contraction.compute(epsilon=1.0, rounds=0, radius=1.0, sigma=1.5, batch_size=10, eta=0.5)


@pytest.mark.parametrize("mode", ["theorem", "paper"])
def test_proactive_calculator_is_the_papers(mode):
    view = proactive_explorer.proactive(epsilon=0.5, log10_delta=-4, N=10_000, k=5.0, theta=1.0, mode=mode)
    sigma = pdp.sigma(0.5, 1e-4, mode=mode)
    result = pdp.dp_calculator(sigma, 10_000, 5.0, delta=1e-4, mode=mode)
    assert view.values["sigma"] == pytest.approx(sigma, rel=1e-12)
    assert view.values["T_min"] == pytest.approx(result.T_min, rel=1e-12)
    assert view.values["s_max"] == pytest.approx(result.s_max, rel=1e-12)
    if mode == "theorem":
        assert view.values["epsilon_check"] == pytest.approx(0.5, rel=1e-9)
    with pytest.raises(ValueError, match="epsilon"):
        proactive_explorer.proactive(epsilon=-1.0, log10_delta=-4, N=10_000, k=5.0, theta=1.0, mode=mode)


def test_isrl_noise_is_the_papers():
    view = isrl_explorer.isrl_noise(n=1238, rounds=35, batch_size=0, silos=25, epsilon=1.5, log10_delta=-6)
    k = isrl.batch_size_experiments(1238, 35, 1.5)
    kw = dict(lipschitz=1.0, rounds=35, n=1238, epsilon=1.5, delta=1e-6, batch_size=k)
    assert view.values["K"] == k
    assert view.values["sigma[experiments]"] == pytest.approx(isrl.noise_std(formula="experiments", **kw), rel=1e-12)
    assert view.values["sigma[theory]"] == pytest.approx(isrl.noise_std(formula="theory", **kw), rel=1e-12)
    same = isrl_explorer.isrl_noise(n=1238, rounds=35, batch_size=0, silos=3, epsilon=1.5, log10_delta=-6)
    assert same.values == view.values  # M: no amplification under ISRL-DP
    tight = isrl_explorer.isrl_tight_epsilon(n=200, rounds=5, batch_size=20, silos=3, epsilon=1.5, log10_delta=-5)
    sigma = isrl.noise_std(lipschitz=1.0, rounds=5, n=200, epsilon=1.5, delta=1e-5, batch_size=20)
    ours = isrl.mbsgd_epsilon(noise_std=sigma, lipschitz=1.0, batch_size=20, n=200, rounds=5, delta=1e-5)
    assert tight.values["eps_tight"] == pytest.approx(ours, rel=1e-12)
    with pytest.raises(ValueError, match="batch_size"):
        isrl_explorer.isrl_noise(n=100, rounds=35, batch_size=500, silos=25, epsilon=1.5, log10_delta=-6)


@pytest.mark.parametrize(
    "build",
    [modelmix.build, shuffling.build, contraction.build, proactive_explorer.build_proactive, isrl_explorer.build_isrl],
)
def test_every_explorer_builds_without_error_and_reports_its_latency(build):
    explorer = build()
    assert not explorer.error and explorer.png.startswith(b"\x89PNG")
    assert 0 < explorer.last_seconds < 30  # measured latencies are in the report; this catches a hang


def test_shuffling_shows_the_shuffled_runs_three_numbers_and_labels_the_subsampling_value():
    from dpcore.accounting.shuffle_lower import shuffled_epsilons

    view = shuffling.compute(sampling="shuffle", clipping="batch", g=1, E=5, sigma=2.0, batch=1024, delta=1e-5)
    assert "NOT this shuffled run" in view.labels["eps[A0]"]
    assert "NOT valid for shuffling" in view.labels["eps[poisson]"]
    assert "LOWER" in view.labels["eps[lower:replace-one]"] and "replace-one" in view.labels["eps[lower:replace-one]"]
    assert "UPPER" in view.labels["eps[upper]"]
    lib = shuffled_epsilons(2.0, rounds_per_epoch=shuffling.N // 1024, epochs=5, delta=1e-5)
    assert view.values["eps[upper]"] == pytest.approx(lib.upper) == pytest.approx(view.values["eps[A1]"], rel=1e-6)
    assert view.values["eps[poisson]"] == pytest.approx(lib.poisson)
    for key in ("eps[lower:replace-one]", "eps[lower:chua]"):  # coarser grid: still below the library's bound
        assert 0 < view.values[key] <= max(lib.lower.values()) + 1e-9 and view.values[key] < view.values["eps[upper]"]
    sub = shuffling.compute(sampling="fixed", clipping="batch", g=1, E=5, sigma=2.0, batch=1024, delta=1e-5)
    assert "eps[lower:chua]" not in sub.values and "NOT" not in sub.labels["eps[A0]"]
    grouped = shuffling.compute(sampling="shuffle", clipping="batch", g=2, E=5, sigma=2.0, batch=1024, delta=1e-5)
    assert "eps[poisson]" not in grouped.values and any("g = 1 only" in n for n in grouped.notes)


def _explorer_notebooks() -> dict[str, dict]:
    import json
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "notebooks" / "explore"
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.ipynb"))}


def test_each_explorer_notebook_builds_the_modules_topics_names():
    from dpcore.explore import TOPICS

    notebooks = _explorer_notebooks()
    assert sorted(notebooks) == sorted(TOPICS)
    for name, modules in TOPICS.items():
        code = "".join("".join(c["source"]) for c in notebooks[name]["cells"] if c["cell_type"] == "code")
        for module in modules:
            package, _, leaf = module.rpartition(".")
            assert f"from {package} import {leaf}" in code, (name, module)


@pytest.mark.parametrize("word", ["make test", "make figures", "headless", "nbval", "papermill"])
def test_the_dashboards_show_no_developer_text(word):
    """Voilà renders markdown cells and hides code: developer notes belong in code cells (comments)."""
    for name, nb in _explorer_notebooks().items():
        markdown = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert word not in markdown, f"notebooks/explore/{name}.ipynb shows {word!r} on its dashboard"
