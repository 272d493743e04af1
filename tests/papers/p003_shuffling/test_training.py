"""Paper 003's Table 3 / Fig. 1 grid (App. H): the runs it plans, how C is chosen, the ε it reports."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from dpcore.experiments import adapters, registry
from dpcore.papers.p003_shuffling import training as t3


def _plan(profile="paper", lookup=None):
    return registry.get("003_table3").runs(profile, lookup)


def test_003_table3_is_discovered_by_the_registry():
    assert "dpcore.papers.p003_shuffling.training" in registry.discover()
    assert "003_table3" in registry.names()


def test_paper_grid_is_app_h():
    # the modes: test_modes.py; issue 51's closest-reading runs: test_closest_reading_runs
    runs = [r for r in _plan() if not any(f"/{p}/" in r.name for p in ("mode", "full", "closest", "ablation"))]
    finals = [r for r in runs if "/tune/" not in r.name]
    tunes = [r for r in runs if "/tune/" in r.name]
    # per data set: 2 samplings x (5 IC + 5 BC + 4 MC + 5 NP) cells; 6 C values per DP cell
    assert len(finals) == 2 * 2 * 19 and len(tunes) == 2 * 2 * 14 * 6
    fam = Counter(r.name.split("/")[2] for r in finals)
    assert fam == {"IC": 20, "BC": 20, "MC": 16, "NP": 20}
    for r in finals:
        c = r.config
        assert c.epochs == 100 and c.lr == 0.025 and c.lr_rule == "decay_on_drop" and c.lr_decay == 0.9
        assert c.train_size is None and c.validation_size == 0 and c.eval_split == "test" and c.test_size is None
        assert c.batch_size in (64, 128, 256, 512, 1024)
        assert c.model == {"mnist": "lenet5", "cifar10": "cnn003"}[c.dataset]
        if c.private:
            assert c.noise_multiplier == 2.0 and c.noise_convention == "replace_one"
            assert not r.ready and r.waits_for  # C is tuned first
        else:
            assert c.noise_multiplier == 0.0 and c.clip_norm is None and r.ready
        if c.clipping == "mixed":
            assert c.group_size == 64 and c.m in (2, 4, 8, 16)
        if c.clipping == "individual":
            assert (c.s, c.m) == (1, c.batch_size)
        if c.clipping == "batch":
            assert (c.s, c.m) == (c.batch_size, 1)
    for r in tunes:
        c = r.config
        assert c.eval_split == "validation" and c.validation_size == 5000 and c.clip_norm in t3.C_GRID
    assert {r.config.sampling for r in runs} == {"fixed", "shuffle"}


def test_quick_grid_is_reduced_and_labelled():
    runs = _plan("quick")
    assert all("reduced" in r.note for r in runs)
    assert {r.config.batch_size for r in runs} == {64} and {r.config.dataset for r in runs} == {"mnist"}
    assert all(r.config.train_size is not None and r.config.profile == "quick" and r.ready for r in runs)
    # SS/SH x IC/BC/NP: MC needs m >= 2 groups of 64, so none at |S_b| = 64
    assert len(runs) == 2 * 3 and {r.config.clip_norm for r in runs} == {1.0, None}
    assert not [r for r in runs if "/MC/" in r.name]


def test_c_is_chosen_on_validation_accuracy_with_ties_to_the_smaller_c():
    acc = {0.01: 0.5, 0.03: 0.7, 0.1: 0.9, 0.3: 0.9, 1.0: 0.8, 3.0: 0.2}

    def lookup(cfg):
        if cfg.eval_split == "test":  # only issue 51's closest reading looks up full-length runs (IC, |S_b| = 1024)
            assert (cfg.clipping, cfg.batch_size, cfg.epochs) == ("individual", 1024, 100), "only tuning runs"
            return None
        return {"best_accuracy": acc[cfg.clip_norm]} if cfg.clip_norm in acc else None  # C_GRID only, not large C

    finals = {r.name: r for r in _plan(lookup=lookup) if "/tune/" not in r.name}
    cell = finals["mnist/SH/BC/b256"]
    assert cell.ready and cell.config.clip_norm == 0.1 and "C = 0.1 chosen on the validation split" in cell.note
    partial = {r.name: r for r in _plan(lookup=lambda cfg: None if cfg.clip_norm == 3.0 else lookup(cfg))}
    assert not partial["mnist/SH/BC/b256"].ready
    assert partial["mnist/SH/BC/b256"].waits_for == ("mnist/SH/BC/b256/tune/C3",)


def _record(sampling, batch, steps, *, n=60000, epochs=100.0, sigma=2.0, clip=0.5):
    return {
        "private": True, "sampling": sampling, "clipping": "batch", "clip_norm": clip, "noise_std": 2 * clip * sigma,
        "noise_multiplier": sigma, "noise_convention": "replace_one", "dataset_size": n, "batch_size": batch,
        "steps": steps, "epochs": epochs, "modelmix": None, "linf_p": None, "clip_norm_type": "l2", "group_size": None,
    }  # fmt: skip


def _final(name):
    return next(r.config for r in _plan() if r.name == name)


def test_paper_epsilon_is_a1_g5_for_shuffling():
    cfg = _final("mnist/SH/BC/b256")
    eps = t3.paper_epsilon(_record("shuffle", 256, 100 * 234, epochs=100 * 234 * 256 / 60000), cfg)
    assert eps.value == pytest.approx(33.104, abs=5e-4)  # G_5 at δ = 1e-5 (paper 003 Thm F.1)
    assert eps.delta == 1e-5 and "A_1" in eps.label
    a0 = t3.a0_epsilon(_record("shuffle", 256, 23400), cfg)
    assert math.isnan(a0.value) and "not analysed" in a0.label


@pytest.mark.parametrize(
    "n, batch, a1, a0_clt",
    # independent numpy/scipy computation, σ = 2, E = 100, δ = 1e-5, ⌊N/|S_b|⌋·E rounds
    [(60000, 64, 35.013, 0.745), (60000, 256, 34.982, 1.598), (60000, 1024, 34.759, 3.483),
     (50000, 1024, 34.593, 3.867)],
)  # fmt: skip
def test_paper_and_standard_epsilon_for_subsampling(n, batch, a1, a0_clt):
    cfg = _final("mnist/SS/BC/b256")
    rec = _record("fixed", batch, (n // batch) * 100, n=n)
    assert t3.paper_epsilon(rec, cfg).value == pytest.approx(a1, abs=1e-3)
    std = t3.a0_epsilon(rec, cfg)
    assert std.value == adapters.standard_epsilon(rec, 1e-5)[0] and std.label.startswith("A_0")
    # the library's A_0 accountant is the GDP CLT (asymptotic; the note's CLT uses T = E·N/|S_b|, not floored,
    # so it is up to ~1% higher) or a rigorous bound above it; either way far below A_1 (the paper's disclaimer)
    assert 0.988 * a0_clt <= std.value < a1 / 4


def test_non_private_runs_have_infinite_epsilon():
    np_cfg = _final("mnist/SS/NP/b256")
    rec = _record("fixed", 256, 23400)
    assert t3.paper_epsilon(rec, np_cfg).value == math.inf and t3.a0_epsilon(rec, np_cfg).value == math.inf
    assert t3.paper_epsilon(rec, np_cfg).to_dict()["value"] == "inf"


def test_table3_frame_picks_the_best_batch_size_and_lists_missing_cells(tmp_path):
    from dpcore.experiments.config import config_hash
    from dpcore.experiments.store import Store

    store = Store.default("quick", "003_table3", results_root=tmp_path)
    fake = {"mnist/SS/IC/b64": (0.91, 0.90, 5.3, 0.7), "mnist/SS/NP/b64": (0.97, 0.96, math.inf, math.inf)}
    for run in _plan("quick"):
        if run.name in fake:
            best, final, a1, a0 = fake[run.name]
            store.write({
                "format": 1, "hash": config_hash(run.config), "config": run.config.to_dict(), "run": run.name,
                "best_accuracy": best, "best_epoch": 3, "final_accuracy": final, "history": [],
                "epsilon": {"paper": {"value": "inf" if a1 == math.inf else a1, "label": "A_1"},
                            "standard": {"value": "inf" if a0 == math.inf else a0, "label": "A_0"}},
            })  # fmt: skip
    cells = t3.cell_frame("quick", results_root=tmp_path, recompute_epsilon=False)  # fake results: no record
    assert len(cells) == 6 and (cells["status"] == "done").sum() == 2
    table = t3.table3_frame(cells).set_index(["dataset", "sampling", "clipping"])
    ic = table.loc[("mnist", "SS", "IC")]
    assert (ic["best_accuracy"], ic["final_accuracy"], ic["batch_size"], ic["missing"]) == (0.91, 0.90, 64, 0)
    assert ic["nonprivate_best_accuracy"] == 0.97 and ic["epsilon_paper"] == 5.3
    bc = table.loc[("mnist", "SS", "BC")]
    assert bc["missing"] == 1 and math.isnan(bc["best_accuracy"])
    assert len(table) == 2 * 3  # MNIST's six (sampling, clipping) rows; MC has no cell (missing 0, no accuracy)
    mc = table.loc[("mnist", "SS", "MC")]
    assert mc["missing"] == 0 and math.isnan(mc["best_accuracy"])


def test_shuffled_epochs_count_permutations_not_examples():
    # MNIST at |S_b| = 1024: 58 rounds per permutation (608 examples dropped each), 100 permutations = 5,800 rounds;
    # T·|S_b|/N = 98.99 would give E = 99 and an ε below G_{sqrt(100)/2}'s 33.104 at δ = 1e-5
    from dpcore.papers.p003_shuffling.training import _epochs_started

    assert _epochs_started({"dataset_size": 60000, "batch_size": 1024, "steps": 5800}) == 100
    assert _epochs_started({"dataset_size": 60000, "batch_size": 1024, "steps": 5801}) == 101
    assert _epochs_started({"dataset_size": 60000, "batch_size": 128, "steps": 1}) == 1


def test_tuning_grid_is_continued_until_the_optimum_is_interior():
    """Issue 44: a best C at an end of the grid extends it (C_EXTEND_UP / _DOWN), one value per finished round."""
    base = t3.C_GRID
    rising = {c: {"best_accuracy": c / 1000} for c in (*base, *t3.C_EXTEND_UP)}  # best at the top, always
    grid, edge = t3.tuning_grid(base, rising.get)
    assert grid == (*base, *t3.C_EXTEND_UP) and edge == "top"
    peak = {c: {"best_accuracy": 1 - abs(c - 20.0) / 1000} for c in (*base, *t3.C_EXTEND_UP)}  # optimum at C = 20
    assert t3.tuning_grid(base, peak.get) == ((*base, 10.0, 20.0, 50.0), "")
    falling = {c: {"best_accuracy": -c} for c in (*t3.C_EXTEND_DOWN, *base)}
    assert t3.tuning_grid(base, falling.get) == ((*sorted(t3.C_EXTEND_DOWN), *base), "bottom")
    partial = {c: r for c, r in peak.items() if c != 10.0}  # C = 10 not run yet: nothing beyond it is planned
    assert t3.tuning_grid(base, partial.get) == ((*base, 10.0), "")
    interior = {c: {"best_accuracy": 1.0 if c == 0.3 else 0.5} for c in base}
    assert t3.tuning_grid(base, interior.get) == (base, "")
    with pytest.raises(ValueError, match="base"):
        t3.tuning_grid((), interior.get)


def test_continued_cell_reuses_committed_tuning_runs_without_duplicates():
    """The 1024 IC cell's continuation (C = 10, 20) has the configuration of the committed large-C tuning runs:
    the plan lists each configuration once (the registry refuses duplicates)."""
    from dpcore.experiments.registry import get
    from dpcore.experiments.store import Store

    store = Store.default("paper", t3.EXPERIMENT)
    runs = get(t3.EXPERIMENT).runs("paper", store.load)
    names = {r.name for r in runs}
    assert "mnist/SS/IC/b1024/tune/C20" in names and "mnist/SS/IC/b1024/mode/largeC/tune/C20" not in names
    assert "mnist/SS/IC/b1024/mode/largeC/tune/C6" in names


def test_closest_reading_runs():
    """Issue 51 §3: Algorithm 1 as printed at |S_b| = 1024 for each C of CLOSEST_C not trained elsewhere, two more seeds
    at the best finished C (C = 20 while the others are missing), and one labelled momentum ablation; quick: none."""
    assert t3.plan_closest("quick", lambda cfg: None) == []
    runs = {r.name: r for r in t3.plan_closest("paper", lambda cfg: None)}
    for s in ("SS", "SH"):
        cell = f"mnist/{s}/IC/b1024"
        assert {f"{cell}/full/C5", f"{cell}/full/C10", f"{cell}/closest/seed1", f"{cell}/closest/seed2"} <= set(runs)
        assert f"{cell}/full/C20" not in runs  # the mode/largeC run is that configuration
        for seed in (1, 2):
            c = runs[f"{cell}/closest/seed{seed}"].config
            assert (c.clip_norm, c.seed, c.momentum, c.epochs, c.noise_multiplier) == (20.0, seed, 0.0, 100, 2.0)
    ablation = runs["mnist/SS/IC/b1024/ablation/momentum0.9"]
    assert ablation.config.momentum == 0.9 and "NOT the algorithm as printed" in ablation.note

    # a finished C = 10 run that beats C = 20 moves the seeds there
    def lookup(cfg):
        if cfg.epochs == 100 and cfg.seed == 0 and cfg.clip_norm in (10.0, 20.0) and cfg.momentum == 0.0:
            return {"best_accuracy": 0.97 if cfg.clip_norm == 10.0 else 0.96}
        return None

    moved = {r.name: r for r in t3.plan_closest("paper", lookup)}
    assert moved["mnist/SS/IC/b1024/closest/seed1"].config.clip_norm == 10.0
    assert "1 of the C runs still missing" in moved["mnist/SS/IC/b1024/closest/seed1"].note
