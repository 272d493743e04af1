"""Paper 003's named modes of issue 21 at toy scale: per-tensor clipping, the authors' noise placements, their
learning-rate rule, the ε of the mechanism that ran, and unchanged hashes of the runs before the modes."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
import torch
from scipy import optimize, stats
from torch import nn

from dpcore.accounting.records import epsilon_for_record
from dpcore.experiments import registry
from dpcore.experiments.config import RunConfig, canonical_json, config_hash
from dpcore.papers.p003_shuffling import training as t3
from dpcore.training import TrainConfig, Trainer, clipped_group_sum, persample
from dpcore.training.config import FORMER_NOISE_PLACEMENTS
from dpcore.training.schedules import DecayOnMetricDrop, DecayOnNoImprovement, schedule_from_dict

SIGMA, CLIP = 2.0, 0.5


def _ce(out, y):
    return nn.functional.cross_entropy(out, y, reduction="none")


class Small(nn.Module):
    """Both conv paths of the layer engine (few input channels; a routed convolution) and two Linear layers."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(1, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 6, 3, padding=1, bias=False)
        self.fc1 = nn.Linear(6 * 6 * 6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = torch.tanh(self.c1(x))
        h = torch.tanh(self.c2(h))
        return self.fc2(torch.tanh(self.fc1(h.flatten(1))))


def _model(seed=0):
    torch.manual_seed(seed)
    return Small().double()


def _data(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 1, 6, 6, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g)


def _per_tensor_reference(model, x, y, s, clip):
    """Σ_h of a_h with each parameter tensor clipped to C on its own (explicit loop), and the clipped groups."""
    params = [p for p in model.parameters() if p.requires_grad]
    total = [torch.zeros_like(p) for p in params]
    groups = []
    for start in range(0, x.shape[0], s):
        grads = torch.autograd.grad(_ce(model(x[start : start + s]), y[start : start + s]).mean(), params)
        clipped = [g / max(1.0, float(g.norm()) / clip) for g in grads]
        groups.append(clipped)
        for t, c in zip(total, clipped, strict=True):
            t += c
    return total, groups


# ---------------------------------------------------------------------------------------------- per-tensor clipping
@pytest.mark.parametrize("engine, s, route", [
    ("layer", 1, "materialise"), ("layer", 1, "shift"), ("layer", 1, "unfold"), ("layer", 2, None),
    ("vmap", 1, None), ("loop", 3, None), ("batch", 8, None),
])  # fmt: skip
def test_per_tensor_clipping_equals_the_loop_and_bounds_each_tensor(monkeypatch, engine, s, route):
    monkeypatch.setattr(persample, "_FORCE_CONV_ROUTE", route)
    model, (x, y) = _model(), _data(8)
    clip = 0.05  # below every tensor's gradient norm here: each tensor is clipped
    want, groups = _per_tensor_reference(model, x, y, s, clip)
    got = clipped_group_sum(model, _ce, x, y, group_size=s, clip_norm=clip, engine=engine, clip_scope="per_tensor")
    assert got.engine == engine and got.n_groups == len(groups)
    for a, b in zip(got.clipped_sum, want, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)
    k = len(want)
    for clipped in groups:  # every tensor of every group at most C, so the whole vector at most C·√k
        assert max(float(c.norm()) for c in clipped) <= clip * (1 + 1e-9)
        assert math.sqrt(sum(float(c.norm()) ** 2 for c in clipped)) <= clip * math.sqrt(k) * (1 + 1e-9)
    assert bool((got.norms > clip).all())  # the largest per-tensor norm: every group was clipped
    glob = clipped_group_sum(model, _ce, x, y, group_size=s, clip_norm=clip, engine=engine)
    assert not all(torch.allclose(a, b) for a, b in zip(glob.clipped_sum, got.clipped_sum, strict=True))


def test_per_tensor_clipping_can_exceed_the_global_bound_and_refuses_linf():
    model, (x, y) = _model(), _data(1)
    clip = 0.01
    got = clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=clip, clip_scope="per_tensor")
    total = math.sqrt(sum(float(g.norm()) ** 2 for g in got.clipped_sum))
    assert clip < total <= clip * math.sqrt(len(got.clipped_sum)) * (1 + 1e-9)  # √7 · C, not C
    with pytest.raises(ValueError, match="clip_scope"):
        clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=clip, clip_scope="layerwise")
    with pytest.raises(ValueError, match="linf_p"):
        clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=clip, clip_scope="per_tensor", linf_p=4)


# ---------------------------------------------------------------------------------------------- noise placements
def _config(clipping="individual", **kw):
    base = dict(sampling="shuffle", batch_size=8, epochs=1, clipping=clipping, clip_norm=CLIP,
                noise_multiplier=SIGMA, noise_convention="replace_one", lr=0.1, seed=3, device="cpu")  # fmt: skip
    if clipping == "mixed":
        base["group_size"] = 2
    base.update(kw)
    return TrainConfig(**base)


def _update(config, x, y):
    """U/D of round 0 with and without noise (same seed): (clean update, noise part of the update)."""
    model = _model()
    trainer = Trainer(model, (x, y), config)
    noisy = trainer.privatizer.gradient(x, y, 0, x.shape[0])
    clean_cfg = TrainConfig(**{**config.__dict__, "noise_multiplier": 0.0})
    clean = Trainer(_model(), (x, y), clean_cfg).privatizer.gradient(x, y, 0, x.shape[0])
    return clean, [a - b for a, b in zip(noisy, clean, strict=True)], trainer.privatizer


@pytest.mark.parametrize("clipping, m", [("individual", 8), ("mixed", 4), ("batch", 1)])
def test_each_noise_placement_scales_the_noise_and_the_signal_as_its_source(clipping, m):
    x, y = _data(8)
    ref_clean, ref_noise, priv = _update(_config(clipping), x, y)
    base = priv.noise(0)  # N(0, (2Cσ)²) of round 0 (Algorithm 1 line 22)
    assert float(torch.cat([b.flatten() for b in base]).std()) == pytest.approx(2 * CLIP * SIGMA, rel=0.1)
    bc_clean, _, _ = _update(_config("batch"), x, y)  # [ā]_C: the clipped batch-mean gradient
    # Algorithm 1: (U + N(0, (2Cσ)²))/m
    for n, b in zip(ref_noise, base, strict=True):
        torch.testing.assert_close(n, b / m)
    # 93f6075: U + N(0, (2Cσ)²)/m -- the same noise in the update, the clipped sum not divided by m
    clean, noise, _ = _update(_config(clipping, noise_placement="clipped_sum_noise_over_m"), x, y)
    for c, r, n, b in zip(clean, ref_clean, noise, base, strict=True):
        torch.testing.assert_close(c, r * m)
        torch.testing.assert_close(n, b / m)
    # 8186d9f: [ā]_C + N(0, (2Cσ)²)/m -- batch clipping of the mean, whatever the family
    clean, noise, _ = _update(_config(clipping, noise_placement="clipped_mean_noise_over_m"), x, y)
    for c, r, n, b in zip(clean, bc_clean, noise, base, strict=True):
        torch.testing.assert_close(c, r)
        torch.testing.assert_close(n, b / m)
    if clipping == "batch":  # HEAD's BC: [ā]_C + N(0, (Cσ)²)/|S_b|
        clean, noise, _ = _update(_config(clipping, noise_placement="clipped_mean_noise_over_batch"), x, y)
        for c, r, n, b in zip(clean, bc_clean, noise, base, strict=True):
            torch.testing.assert_close(c, r)
            torch.testing.assert_close(n, b / (2 * 8))


def test_noise_placements_validate_their_scope():
    with pytest.raises(ValueError, match="clipped_mean_noise_over_batch"):
        _config("individual", noise_placement="clipped_mean_noise_over_batch")
    with pytest.raises(ValueError, match="sampling"):
        _config(noise_placement="clipped_sum_noise_over_m", sampling="poisson")
    with pytest.raises(ValueError, match="noise_placement"):
        _config(noise_placement="authors")
    with pytest.raises(ValueError, match="private"):
        TrainConfig(sampling="shuffle", batch_size=8, epochs=1, clipping="none", noise_multiplier=0.0,
                    clip_scope="per_tensor")  # fmt: skip
    with pytest.raises(ValueError, match="tensors"):
        _config(clip_scope="per_tensor").accounted(8)


# ---------------------------------------------------------------------------------------------- the lr rule
def test_authors_lr_rule_decays_on_ties_from_the_third_epoch():
    acc = [0.5, 0.4, 0.4, 0.6, 0.55, 0.7]  # epochs 1..6
    ours, theirs = DecayOnMetricDrop(1.0, factor=0.5), DecayOnNoImprovement(1.0, factor=0.5)
    lrs_ours, lrs_theirs = [], []
    for e, a in enumerate(acc):
        ours.on_epoch_end(e, {"test_accuracy": a})
        theirs.on_epoch_end(e, {"test_accuracy": a})
        lrs_ours.append(ours.lr(0, 0.0))
        lrs_theirs.append(theirs.lr(0, 0.0))
    # ours: drops at epochs 2 and 5; theirs: epoch 2 not compared (epoch > 2), the tie at 3 and the drop at 5
    assert lrs_ours == [1.0, 0.5, 0.5, 0.5, 0.25, 0.25]
    assert lrs_theirs == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    resumed = schedule_from_dict(theirs.describe())
    resumed.load_state_dict(theirs.state_dict())
    resumed.on_epoch_end(6, {"test_accuracy": 0.7})  # a tie after resuming: decays
    assert resumed.lr(0, 0.0) == 0.125 and theirs.describe()["kind"] == "decay_on_no_improvement"
    cfg = RunConfig(dataset="mnist", model="lenet5", sampling="shuffle", clipping="batch", batch_size=64, epochs=2,
                    lr=0.025, profile="paper", clip_norm=1.0, noise_multiplier=2.0, lr_rule="decay_on_no_improvement",
                    lr_decay=0.9)  # fmt: skip
    assert cfg.train_config().lr == {"kind": "decay_on_no_improvement", "lr0": 0.025, "factor": 0.9,
                                     "metric": "test_accuracy"}  # fmt: skip
    with pytest.raises(ValueError, match="first_check"):
        DecayOnNoImprovement(1.0, first_check=1)


# ---------------------------------------------------------------------------------------------- ε of the mechanism
def _gdp_epsilon(mu, delta):
    """ε of μ-GDP at δ (Dong, Roth, Su, Cor. 2.13), solved directly with scipy."""

    def gap(eps):
        return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps + stats.norm.logcdf(-eps / mu - mu / 2)) - delta

    return optimize.brentq(gap, 0.0, mu * mu / 2 + 10 * mu + 10, xtol=1e-12)


K = 7  # trainable tensors of Small


@pytest.mark.parametrize("clipping, kw, sigma_eff, rec_clipping", [
    ("individual", {}, SIGMA, "individual"),
    ("individual", {"clip_scope": "per_tensor"}, SIGMA / math.sqrt(K), "individual"),
    ("individual", {"noise_placement": "clipped_sum_noise_over_m"}, SIGMA / 8, "individual"),
    ("mixed", {"noise_placement": "clipped_sum_noise_over_m", "clip_scope": "per_tensor"}, SIGMA / 4 / math.sqrt(K),
     "mixed"),
    ("individual", {"noise_placement": "clipped_mean_noise_over_m", "clip_scope": "per_tensor"},
     SIGMA / 8 / math.sqrt(K), "batch"),
    ("batch", {"noise_placement": "clipped_mean_noise_over_batch"}, SIGMA / (2 * 8), "batch"),
])  # fmt: skip
def test_epsilon_is_that_of_the_effective_noise_multiplier(clipping, kw, sigma_eff, rec_clipping):
    x, y = _data(16)
    result = Trainer(_model(), (x, y), _config(clipping, epochs=3, **kw)).run()
    rec = result.record
    assert rec.noise_multiplier == pytest.approx(sigma_eff, rel=1e-12) and rec.clipping == rec_clipping
    assert rec.noise_std / (2 * rec.clip_norm) == pytest.approx(sigma_eff, rel=1e-12)
    # shuffling, 3 epochs: A_1 is exactly G_{sqrt(E)/σ_eff} (paper 003 Thm F.1)
    assert epsilon_for_record(rec, 1e-5) == pytest.approx(_gdp_epsilon(math.sqrt(3) / sigma_eff, 1e-5), rel=1e-6)


def test_paper_accountant_and_claim_of_a_mode_run():
    cfg = RunConfig(dataset="mnist", model="lenet5", sampling="fixed", clipping="individual", batch_size=1024,
                    epochs=100, lr=0.025, profile="paper", clip_norm=1.0, noise_multiplier=SIGMA,
                    noise_convention="replace_one", noise_placement="clipped_sum_noise_over_m", clip_scope="per_tensor",
                    lr_rule="decay_on_no_improvement", lr_decay=0.9)  # fmt: skip
    mech = cfg.train_config().accounted(1024, tensors=10)
    sigma_eff = SIGMA / 1024 / math.sqrt(10)
    assert mech.noise_multiplier == pytest.approx(sigma_eff) and mech.clip_norm == pytest.approx(math.sqrt(10))
    steps, n = 5800, 60000
    rec = {"private": True, "sampling": "fixed", "clipping": mech.clipping, "clip_norm": mech.clip_norm,
           "noise_multiplier": mech.noise_multiplier, "noise_std": mech.noise_std, "noise_convention": "replace_one",
           "dataset_size": n, "batch_size": 1024, "steps": steps}  # fmt: skip
    eps = t3.paper_epsilon(rec, cfg)
    claim = t3.claimed_epsilon(rec, cfg)
    assert claim.value == pytest.approx(34.759, abs=1e-3) and "claim" in claim.label  # the nominal σ = 2
    # direct: δ(ε) of the exact A_1 mixture, c² ~ Binomial(T, |S_b|/N), each component G_{c/σ_eff}
    c2 = np.arange(0, 600)
    pmf = stats.binom.pmf(c2, steps, 1024 / n)
    mu = np.sqrt(c2[1:]) / sigma_eff
    e = eps.value
    comp = stats.norm.cdf(-e / mu + mu / 2) - np.exp(e + stats.norm.logcdf(-e / mu - mu / 2))
    assert float(np.sum(pmf[1:] * comp)) + stats.binom.sf(599, steps, 1024 / n) == pytest.approx(1e-5, rel=1e-3)
    assert eps.value > 1e4 * claim.value


# ---------------------------------------------------------------------------------------------- hashes and plan
def test_old_configurations_hash_as_before_and_modes_at_default_change_nothing():
    base = RunConfig(dataset="mnist", model="lenet5", sampling="shuffle", clipping="batch", batch_size=256,
                     clip_norm=0.1, noise_multiplier=2.0, epochs=100, lr=0.025, profile="paper")  # fmt: skip
    assert config_hash(base) == config_hash(base.with_(clip_scope="global", noise_placement="algorithm1"))
    assert config_hash(base) != config_hash(base.with_(clip_scope="per_tensor"))
    tc = base.train_config()
    assert "clip_scope" not in tc.as_dict() and "noise_placement" not in tc.as_dict()  # checkpoint fingerprints
    mode = base.with_(noise_placement="clipped_mean_noise_over_m").train_config().as_dict()
    assert mode["noise_placement"] == "clipped_mean_noise_over_m" and "clip_scope" not in mode


@pytest.mark.parametrize(("old", "new"), sorted(FORMER_NOISE_PLACEMENTS.items()))
def test_a_former_placement_spelling_is_read_as_its_mechanism_and_hashes_and_fingerprints_as_before(old, new):
    """Issue 43 named the placements by mechanism; configurations written with the former spelling (the authors'
    commit) read as the new name, and the hash and the trainer's checkpoint fingerprint use the former spelling, so
    committed results and checkpoints keep their names."""
    base = RunConfig(dataset="mnist", model="lenet5", sampling="shuffle", clipping="batch", batch_size=256,
                     clip_norm=0.1, noise_multiplier=2.0, epochs=100, lr=0.025, profile="paper")  # fmt: skip
    cfg = base.with_(noise_placement=new)
    read = RunConfig.from_dict({**cfg.to_dict(), "noise_placement": old})
    assert read == cfg and read.noise_placement == new
    assert config_hash(cfg) == config_hash(read) != config_hash(base)
    # the hash is that of the former spelling's canonical JSON (as written before the rename)
    kept = {k: v for k, v in cfg.to_dict().items() if k in ("dataset", "model", "sampling", "clipping", "batch_size",
                                                            "clip_norm", "noise_multiplier", "epochs", "lr", "profile")}
    before = hashlib.sha256(canonical_json({**kept, "noise_placement": old}).encode()).hexdigest()[:16]
    assert config_hash(cfg) == before
    assert TrainConfig(**{**cfg.train_config().__dict__, "noise_placement": old}).noise_placement == new
    trainer = Trainer(_model(), _data(16), _config("batch", noise_placement=old))
    assert trainer.config.noise_placement == new
    assert f'"noise_placement": "{old}"' in trainer._fingerprint()  # the checkpoints' spelling


# committed results of the paper profile (results/paper/003_table3/<hash>.json), written before the modes existed
@pytest.mark.parametrize("name, digest", [("mnist/SH/BC/b1024", "d9e4706b1ee7390b")])
def test_committed_table3_cells_keep_their_hash(name, digest):
    from dpcore.experiments.store import Store

    store = Store.default("paper", "003_table3")
    run = next(r for r in registry.get("003_table3").runs("paper", store.load) if r.name == name)
    assert config_hash(run.config) == digest


def test_committed_ic_cell_at_the_old_grid_top_keeps_its_hash():
    """The SH IC |S_b| = 1024 cell ran at C = 3, the top of C_GRID; issue 44 continues its grid (C = 10, 20, 50, ...),
    and the committed C = 3 run keeps its configuration (the hash of its result file)."""
    cfg = t3._config(t3.SETTINGS["paper"], "paper", "mnist", "SH", "IC", 1024, clip=3.0, tune=False, seed=0)
    assert config_hash(cfg) == "67d0de4f8ad39577"


def test_mode_runs_are_listed_apart_from_table3():
    runs = registry.get("003_table3").runs("paper", lambda cfg: None)
    modes = [r for r in runs if "/mode/" in r.name]
    finals = [r for r in modes if "/tune/" not in r.name]
    assert {r.name.split("/mode/")[1] for r in finals} == {"largeC", "lr_authors", "per_tensor", "authors_8186d9f",
                                                           "authors_93f6075", "bc_divided_by_batch"}  # fmt: skip
    assert len(finals) == 2 * (1 + len(t3.MODES))
    for r in modes:
        c = r.config
        assert c.dataset == "mnist" and c.batch_size == 1024 and c.noise_multiplier == SIGMA
    large = [r.config.clip_norm for r in modes if "/largeC/tune/" in r.name]
    assert sorted(large) == sorted(2 * [6.0, 7.0, 8.0, 9.0, 10.0, 20.0])
    assert not [r for r in registry.get("003_table3").runs("quick") if "/mode/" in r.name]
    by_name = {r.name: r.config for r in finals}
    c = by_name["mnist/SH/IC/b1024/mode/authors_8186d9f"]
    assert (c.clip_scope, c.noise_placement, c.lr_rule) == ("per_tensor", "clipped_mean_noise_over_m",
                                                           "decay_on_no_improvement")  # fmt: skip
    assert by_name["mnist/SS/BC/b1024/mode/bc_divided_by_batch"].clip_scope == "global"


def _lookup(best):
    """Fake results: every tuning run reaches 0.5 on the validation split, except C = ``best`` (0.9)."""

    def lookup(cfg):
        assert cfg.eval_split == "validation", "only tuning runs are looked up"
        return {"best_accuracy": 0.9 if cfg.clip_norm == best else 0.5}

    return lookup


def test_large_c_cell_only_when_a_large_c_wins_and_modes_take_their_tuned_c():
    runs = {r.name: r for r in t3.plan_modes("paper", _lookup(8.0))}
    large = runs["mnist/SH/IC/b1024/mode/largeC"]
    assert large.ready and large.config.clip_norm == 8.0 and large.config.noise_placement == "algorithm1"
    assert runs["mnist/SS/IC/b1024/mode/per_tensor"].config.clip_norm == 0.01  # all tied: the smaller C
    runs = {r.name: r for r in t3.plan_modes("paper", _lookup(3.0))}
    assert "mnist/SH/IC/b1024/mode/largeC" not in runs  # the Table 3 cell's own C won: nothing new to run
    lr_only = runs["mnist/SH/IC/b1024/mode/lr_authors"]
    assert lr_only.ready and lr_only.config.clip_norm == 3.0 and lr_only.config.lr_rule == "decay_on_no_improvement"
    assert runs["mnist/SH/BC/b1024/mode/bc_divided_by_batch"].config.clip_norm == 3.0
    waiting = {r.name: r for r in t3.plan_modes("paper", lambda cfg: None)}["mnist/SH/IC/b1024/mode/authors_93f6075"]
    assert not waiting.ready and len(waiting.waits_for) == len(t3.MODE_C_GRID)
    assert t3.plan_modes("quick", _lookup(3.0)) == []


def test_mode_frame_reports_the_mechanism_and_the_claim_apart(tmp_path):
    from dpcore.experiments.store import Store

    store = Store.default("paper", "003_table3", results_root=tmp_path)
    plan = {r.name: r for r in registry.get("003_table3").runs("paper", lambda cfg: None)}

    def write(name, cfg, record=None):
        record = record or {
            "private": True,
            "sampling": "shuffle",
            "clipping": "individual",
            "clip_norm": cfg.clip_norm,
            "noise_multiplier": SIGMA,
            "noise_std": 2 * SIGMA * cfg.clip_norm,
            "noise_convention": "replace_one",
            "dataset_size": 55000,
            "batch_size": 1024,
            "steps": 265,
        }
        store.write(
            {
                "format": 1,
                "hash": config_hash(cfg),
                "config": cfg.to_dict(),
                "run": name,
                "best_accuracy": 0.9,
                "best_epoch": 3,
                "final_accuracy": 0.9,
                "history": [],
                "epsilon": {},
                "record": record,
            }
        )

    for c in t3.C_GRID:  # the SH IC cell's tuning, all tied
        write(f"t{c}", plan[f"mnist/SH/IC/b1024/tune/C{c:g}"].config)
    store_plan = {r.name: r for r in registry.get("003_table3").runs("paper", store.load)}
    mode = store_plan["mnist/SH/IC/b1024/mode/authors_8186d9f"]
    assert not mode.ready  # its own tuning is missing
    cfg = store_plan["mnist/SH/IC/b1024/mode/lr_authors"].config
    assert cfg.clip_norm == t3.C_GRID[0] and cfg.lr_rule == "decay_on_no_improvement"  # ties: the smaller C
    k, m = 10, 1024  # LeNet-5 tensors, groups of IC at |S_b| = 1024
    mech = cfg.with_(clip_scope="per_tensor", noise_placement="clipped_mean_noise_over_m").train_config()
    mech = mech.accounted(m, tensors=k)
    record = {"private": True, "sampling": "shuffle", "clipping": mech.clipping, "clip_norm": mech.clip_norm,
              "noise_multiplier": mech.noise_multiplier, "noise_std": mech.noise_std, "noise_convention": "replace_one",
              "dataset_size": 60000, "batch_size": m, "steps": 5800}  # fmt: skip
    write("mnist/SH/IC/b1024/mode/lr_authors", cfg, record)  # a record of the 8186d9f mechanism, to read it back
    frame = t3.mode_frame("paper", results_root=tmp_path).set_index("run")
    row = frame.loc["mnist/SH/IC/b1024/mode/lr_authors"]
    assert row["status"] == "done" and row["mode"] == "lr_authors"
    assert row["sigma_effective"] == pytest.approx(SIGMA / m / math.sqrt(k))
    assert row["epsilon_claimed"] == pytest.approx(33.104, abs=1e-3)  # G_5: the nominal σ = 2, E = 100
    assert row["epsilon_paper"] == pytest.approx(_gdp_epsilon(10 * m * math.sqrt(k) / SIGMA, 1e-5), rel=1e-6)
    assert math.isnan(frame.loc["mnist/SH/IC/b1024/mode/authors_8186d9f", "epsilon_claimed"])
    assert len(frame) == 4 + 2 * (1 + len(t3.MODES)) and not t3.cell_frame("paper", results_root=tmp_path)[
        "run"].str.contains("/mode/").any()  # fmt: skip


def test_audit_claim_keys_name_the_code_version_and_stay_those_recorded_before_the_rename():
    from dpcore.papers.p003_shuffling.audit_claims import MODE_KEYS
    from dpcore.papers.p003_shuffling.audit_modes import AUTHORS_PLACEMENTS

    assert set(AUTHORS_PLACEMENTS) == set(FORMER_NOISE_PLACEMENTS.values())
    keys = {new: f"audit.modes.{old}.lower_bound_exceeds_claim" for old, new in FORMER_NOISE_PLACEMENTS.items()}
    assert MODE_KEYS == keys
