"""Clipped sums of per-group gradients against explicit loops over samples / groups (paper 003, eq. (22))."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from dpcore.training import clip_factors, clipped_group_sum, layer_engine_supported, per_group_gradients
from dpcore.training.persample import LayerEngineError, truncate_linf


def _ce(out, y):
    return nn.functional.cross_entropy(out, y, reduction="none")


class Mixed(nn.Module):
    """Every path of the layer engine: few input channels (grouped forward convolution, stride 1 and 2),
    grouped weight-gradient convolutions (stride 1, dilation 2, a 3×2 kernel), a ghost-norm convolution
    (small map, many channels), a Linear on a sequence (3-D input) and a final Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(1, 4, 3, padding=1)
        self.c1b = nn.Conv2d(4, 2, 3, padding=1)
        self.c2 = nn.Conv2d(2, 6, 3, stride=2, padding=1, bias=False)
        self.c3 = nn.Conv2d(6, 5, 3, padding=2, dilation=2)
        self.c4 = nn.Conv2d(5, 7, (3, 2), padding=(1, 0))
        self.c5 = nn.Conv2d(7, 64, 3, padding=1)  # small map, many channels: ghost norm
        self.seq = nn.Linear(3, 4)
        self.fc = nn.Linear(64 * 4 * 4, 3)

    def forward(self, x):
        h = torch.tanh(self.c1(x))
        h = torch.tanh(self.c1b(h))
        h = torch.tanh(self.c2(h))
        h = torch.tanh(self.c3(h))
        h = torch.tanh(self.c4(h))  # (n, 7, 4, 3)
        h = self.c5(h)  # (n, 64, 4, 3)
        h = torch.tanh(self.seq(h))  # Linear over the last axis: (n, 64, 4, 4)
        return self.fc(h.flatten(1))


def _data(n, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 1, 8, 8, generator=g, dtype=dtype), torch.randint(0, 3, (n,), generator=g)


def _model(seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    return Mixed().to(dtype)


def _reference(model, x, y, s, clip, linf_p=None):
    """Σ_h [a_h]_C by an explicit loop: one ordinary backward per group of s consecutive samples."""
    params = [p for p in model.parameters() if p.requires_grad]
    total = [torch.zeros_like(p) for p in params]
    norms = []
    for start in range(0, x.shape[0], s):
        loss = _ce(model(x[start : start + s]), y[start : start + s]).mean()
        grads = torch.autograd.grad(loss, params)
        norm = math.sqrt(sum(float(g.pow(2).sum()) for g in grads))
        norms.append(norm)
        factor = 1.0 / max(1.0, norm / clip)
        for t, g in zip(total, grads, strict=True):
            v = g * factor
            if linf_p is not None:
                bound = clip / math.sqrt(linf_p)
                v = v.clamp(-bound, bound)
            t += v
    return total, torch.tensor(norms, dtype=x.dtype)


@pytest.mark.parametrize("engine", ["layer", "vmap", "loop"])
@pytest.mark.parametrize("s", [1, 3])  # 10 samples: groups of 3 leave a remainder group of 1
def test_clipped_sum_equals_explicit_loop(engine, s):
    model = _model()
    x, y = _data(10)
    clip = 0.05  # small enough that most groups are clipped
    ref, ref_norms = _reference(model, x, y, s, clip)
    res = clipped_group_sum(model, _ce, x, y, group_size=s, clip_norm=clip, engine=engine)
    assert res.n_groups == math.ceil(10 / s)
    torch.testing.assert_close(res.norms, ref_norms, rtol=1e-10, atol=1e-12)
    assert (ref_norms > clip).sum() >= 3  # clipping is really exercised
    for a, b in zip(res.clipped_sum, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("route", ["materialise", "unfold", "shift"])
@pytest.mark.parametrize("linf_p", [None, 5000])
def test_layer_engine_conv_routes_equal_explicit_loop(monkeypatch, route, linf_p):
    """Every conv layer of the model (stride 2, dilation 2, a 3×2 kernel, padding 0/1/2) forced onto one route of
    the layer engine: materialised per-sample gradients, or the ghost norm from the unfolded-input Gram matrix
    or from the pixel Gram matrix (shifted sums), each followed by the re-weighted weight-gradient convolution."""
    import dpcore.training.persample as persample

    monkeypatch.setattr(persample, "_FORCE_CONV_ROUTE", route)
    monkeypatch.setattr(persample, "SMALL_CONV_FAN_IN", 0)  # the first layers too
    routes = []
    original = persample._conv_input_gram_shift if route == "shift" else persample._conv_input_gram_unfold

    def spy(module, a, g):
        routes.append(module)
        return original(module, a, g)

    monkeypatch.setattr(persample, "_conv_input_gram_shift" if route == "shift" else "_conv_input_gram_unfold", spy)
    model = _model(5)
    x, y = _data(9, seed=5)
    clip = 0.05
    ref, ref_norms = _reference(model, x, y, 1, clip, linf_p=linf_p)
    res = clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=clip, linf_p=linf_p, engine="layer")
    n_convs = sum(isinstance(m, nn.Conv2d) for m in model.modules())
    # ghost routes give no per-sample gradients to truncate: l2 + l∞ clipping always materialises
    assert len(routes) == (0 if route == "materialise" or linf_p is not None else n_convs)
    torch.testing.assert_close(res.norms, ref_norms, rtol=1e-10, atol=1e-12)
    for a, b in zip(res.clipped_sum, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("factor", [0.0, math.inf])
@pytest.mark.parametrize("linf_p", [None, 5000])
@pytest.mark.parametrize("chunk", [4, 64])  # 6 samples: in two calls (4 + 2) or one
def test_materialised_conv_gradients_bmm_and_grouped_agree_with_loop(monkeypatch, factor, linf_p, chunk):
    """The materialise route's two ways to per-sample conv gradients, each forced on every layer: the grouped
    weight-gradient convolution (BMM_ROUTE_FACTOR = 0) and unfold + batched matmul (inf), with stride 2,
    dilation 2 and a 3×2 kernel, l2 and l2 + l∞ clipping, computed a chunk of samples per call
    (MATERIALISE_CHUNK) or all at once, against one backward per sample."""
    import dpcore.training.persample as persample

    monkeypatch.setattr(persample, "MATERIALISE_CHUNK", chunk)

    monkeypatch.setattr(persample, "_FORCE_CONV_ROUTE", "materialise")
    monkeypatch.setattr(persample, "SMALL_CONV_FAN_IN", 0)
    monkeypatch.setattr(persample, "BMM_ROUTE_FACTOR", factor)
    monkeypatch.setattr(persample, "TRUNC_BMM_ROUTE_FACTOR", factor)
    unfolded = []
    original = nn.functional.unfold

    def spy(a, *args, **kwargs):
        unfolded.append(a.shape)
        return original(a, *args, **kwargs)

    model = _model(7)
    x, y = _data(6, seed=7)
    ref, ref_norms = _reference(model, x, y, 1, 0.05, linf_p=linf_p)
    monkeypatch.setattr(nn.functional, "unfold", spy)
    res = clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=0.05, linf_p=linf_p, engine="layer")
    monkeypatch.setattr(nn.functional, "unfold", original)
    n_convs = sum(isinstance(m, nn.Conv2d) for m in model.modules())
    # l2: a call per MATERIALISE_CHUNK samples; l2 + l∞: one per chunk of groups (all 6 fit in TRUNC_CHUNK_FLOATS)
    calls = 1 if linf_p is not None else math.ceil(6 / chunk)
    assert len(unfolded) == (n_convs * calls if math.isinf(factor) else 0)
    torch.testing.assert_close(res.norms, ref_norms, rtol=1e-10, atol=1e-12)
    for a, b in zip(res.clipped_sum, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("cin", "cout", "k", "stride", "padding", "dilation", "size"),
    [
        (3, 5, (3, 3), 1, 1, 1, (9, 9)),
        (3, 5, (3, 2), (2, 1), (1, 0), (1, 2), (10, 7)),
        (4, 6, (3, 3), 2, (2, 1), (2, 1), (11, 8)),
        (2, 3, (3, 3), (3, 2), (3, 2), (1, 3), (5, 6)),
        (2, 3, (5, 3), 1, 0, 1, (6, 6)),
    ],
)
def test_conv_ghost_norms_equal_per_sample_gradient_norms(cin, cout, k, stride, padding, dilation, size):
    """Both Gram-matrix forms of ‖∇_W f_i‖² against autograd, one sample at a time."""
    from dpcore.training.persample import _conv_input_gram_shift, _conv_input_gram_unfold

    torch.manual_seed(0)
    conv = nn.Conv2d(cin, cout, k, stride=stride, padding=padding, dilation=dilation, bias=False).double()
    a = torch.randn(4, cin, *size, dtype=torch.float64)
    g = torch.randn_like(conv(a))
    ref = torch.stack(
        [torch.autograd.grad(conv(a[i : i + 1]), conv.weight, g[i : i + 1])[0].pow(2).sum() for i in range(4)]
    )
    torch.testing.assert_close(_conv_input_gram_shift(conv, a, g), ref, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(_conv_input_gram_unfold(conv, a, g), ref, rtol=1e-10, atol=1e-12)


def test_batch_clipping_is_the_clipped_mean_gradient():
    model = _model(1)
    x, y = _data(12, seed=1)
    params = list(model.parameters())
    mean_grad = torch.autograd.grad(_ce(model(x), y).mean(), params)
    norm = math.sqrt(sum(float(g.pow(2).sum()) for g in mean_grad))
    clip = norm / 3
    res = clipped_group_sum(model, _ce, x, y, group_size=12, clip_norm=clip, max_physical_batch=5)
    assert res.engine == "batch" and res.n_groups == 1
    for a, g in zip(res.clipped_sum, mean_grad, strict=True):
        torch.testing.assert_close(a, g * (clip / norm), rtol=1e-10, atol=1e-13)
    out_norm = math.sqrt(sum(float(a.pow(2).sum()) for a in res.clipped_sum))
    assert out_norm == pytest.approx(clip, rel=1e-10)


@pytest.mark.parametrize("engine", ["layer", "vmap"])
def test_mixed_clipping_definition_and_micro_batches(engine):
    """Mixed clipping = Σ over groups of the clipped group means, whatever the physical micro-batch."""
    model = _model(2)
    x, y = _data(16, seed=2)
    ref, _ = _reference(model, x, y, 4, 0.1)
    for physical in (4, 8, 16):
        res = clipped_group_sum(
            model, _ce, x, y, group_size=4, clip_norm=0.1, engine=engine, max_physical_batch=physical
        )
        for a, b in zip(res.clipped_sum, ref, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("engine", ["layer", "vmap", "loop"])
def test_l2_linf_clipping_matches_algorithm_2(engine):
    model = _model(3)
    x, y = _data(6, seed=3)
    ref, _ = _reference(model, x, y, 1, 0.5, linf_p=5000)
    res = clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=0.5, linf_p=5000, engine=engine)
    for a, b in zip(res.clipped_sum, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    # truncation really acts: without it the sum differs
    plain = clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=0.5, engine=engine)
    assert any(not torch.allclose(a, b) for a, b in zip(res.clipped_sum, plain.clipped_sum, strict=True))


@pytest.mark.parametrize("s", [1, 3])  # 10 samples: groups of 3 leave a remainder group of 1
@pytest.mark.parametrize("chunk_floats", [1, 20_000, 2**30])  # one group per chunk (7,901 floats), two, all
@pytest.mark.parametrize("max_positions", [0, 256])  # conv layers' per-sample gradients for the whole block, by chunk
def test_l2_linf_clipping_in_chunks_of_groups_equals_explicit_loop(monkeypatch, s, chunk_floats, max_positions):
    """The layer engine's l2 + l∞ clipping materialises a chunk of groups at a time (TRUNC_CHUNK_FLOATS): the
    chunks' norms and truncated sums add up to the explicit loop's, with a remainder group and chunks that do not
    divide the groups, whether the conv layers compute their per-sample gradients chunk by chunk or for the whole
    block at once (TRUNC_CHUNK_MAX_POSITIONS)."""
    import dpcore.training.persample as persample

    monkeypatch.setattr(persample, "TRUNC_CHUNK_FLOATS", chunk_floats)
    monkeypatch.setattr(persample, "TRUNC_CHUNK_MAX_POSITIONS", max_positions)
    calls = []
    per_sample = persample._conv_per_sample

    def spy(module, a, *args):
        calls.append(a.shape[0])
        return per_sample(module, a, *args)

    monkeypatch.setattr(persample, "_conv_per_sample", spy)
    chunks = []
    original = persample.clip_factors

    def spy(norms, clip_norm):
        chunks.append(norms.numel())
        return original(norms, clip_norm)

    monkeypatch.setattr(persample, "clip_factors", spy)
    model = _model(8)
    x, y = _data(10, seed=8)
    ref, ref_norms = _reference(model, x, y, s, 0.05, linf_p=500)
    res = clipped_group_sum(model, _ce, x, y, group_size=s, clip_norm=0.05, linf_p=500, engine="layer")
    groups = math.ceil(10 / s)
    assert sum(chunks) == groups and res.n_groups == groups
    # groups of 3: the layer engine's two blocks (3 whole groups, then the remainder group) are chunked apart
    expected = {1: [1] * groups, 20_000: [2] * 5 if s == 1 else [2, 1, 1], 2**30: [10] if s == 1 else [3, 1]}
    assert chunks == expected[chunk_floats]
    n_convs = sum(isinstance(m, nn.Conv2d) for m in model.modules())
    # samples per call of each conv layer: the whole block (10; or 9, then the remainder group's 1) or each chunk
    # (the remainder block's one chunk holds its 1 sample)
    blocks = [10] if s == 1 else [9, 1]
    chunk_samples = chunks if s == 1 else [k * s for k in chunks[:-1]] + [1]
    assert sorted(calls) == sorted((blocks if max_positions == 0 else chunk_samples) * n_convs)
    torch.testing.assert_close(res.norms, ref_norms, rtol=1e-10, atol=1e-12)
    for a, b in zip(res.clipped_sum, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_per_group_gradients_vmap_equals_loop_and_infinite_clip_is_the_plain_sum():
    model = _model(4)
    x, y = _data(7, seed=4)
    gv = per_group_gradients(model, _ce, x, y, 2, engine="vmap")
    gl = per_group_gradients(model, _ce, x, y, 2, engine="loop")
    for a, b in zip(gv, gl, strict=True):
        assert a.shape[0] == 4
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    res = clipped_group_sum(model, _ce, x, y, group_size=2, clip_norm=math.inf, engine="layer")
    for a, g in zip(res.clipped_sum, gv, strict=True):
        torch.testing.assert_close(a, g.sum(0), rtol=1e-10, atol=1e-12)


def test_layer_engine_support_and_fallbacks():
    assert layer_engine_supported(_model())[0]
    gn = nn.Sequential(nn.Conv2d(1, 4, 3), nn.GroupNorm(2, 4), nn.Flatten(), nn.Linear(4 * 6 * 6, 3)).double()
    ok, reason = layer_engine_supported(gn)
    assert not ok and "parameter" in reason
    x, y = _data(4)
    with pytest.raises(ValueError, match="does not support"):
        clipped_group_sum(gn, _ce, x, y, group_size=1, clip_norm=1.0, engine="layer")
    assert clipped_group_sum(gn, _ce, x, y, group_size=1, clip_norm=1.0).engine == "vmap"
    bn = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(72, 3)).double()
    assert not layer_engine_supported(bn)[0]
    inplace = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(inplace=True), nn.Flatten(), nn.Linear(72, 3)).double()
    with pytest.raises(LayerEngineError, match="in place"):
        clipped_group_sum(inplace, _ce, x, y, group_size=1, clip_norm=1.0, engine="layer")
    res = clipped_group_sum(inplace, _ce, x, y, group_size=1, clip_norm=1.0)  # auto falls back to vmap
    ref, _ = _reference(inplace, x, y, 1, 1.0)
    assert res.engine == "vmap"
    for a, b in zip(res.clipped_sum, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_empty_batch_and_argument_checks():
    model = _model()
    x, y = _data(0)
    res = clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=1.0)
    assert res.n_groups == 0 and all(float(t.abs().sum()) == 0 for t in res.clipped_sum)
    x, y = _data(4)
    with pytest.raises(ValueError, match="clip_norm"):
        clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=0.0)
    with pytest.raises(ValueError, match="group_size"):
        clipped_group_sum(model, _ce, x, y, group_size=0, clip_norm=1.0)
    with pytest.raises(ValueError, match="engine"):
        clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=1.0, engine="magic")
    with pytest.raises(ValueError, match="one group"):
        clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=1.0, engine="batch")


@given(st.lists(st.floats(0.0, 1e3), min_size=1, max_size=20), st.floats(1e-3, 1e2))
def test_clip_factors_bound_the_norm(norms, clip):
    n = torch.tensor(norms, dtype=torch.float64)
    c = clip_factors(n, clip)
    assert torch.all(c <= 1.0) and torch.all(c > 0)
    assert torch.all(n * c <= clip * (1 + 1e-12))
    assert torch.all(c[n <= clip] == 1.0)


def test_truncate_linf_bound():
    x = torch.tensor([3.0, -0.1, -5.0], dtype=torch.float64)
    assert truncate_linf(x, 1.0, 4).tolist() == [0.5, -0.1, -0.5]


@pytest.mark.parametrize("clip_scope", ["global", "per_tensor"])
def test_ghost_norm_round_off_below_zero_is_a_zero_norm_not_nan(monkeypatch, clip_scope):
    """A ghost norm is a sum of Gram products; for a (nearly) zero gradient it can come out a hair below 0 by
    round-off.  Its square root must be 0, not NaN (the NaN stopped paper 002's [19] ablation run at step 435)."""
    import dpcore.training.persample as persample

    original = persample._layer_term

    def below_zero(*args, **kwargs):
        term = original(*args, **kwargs)
        sq = term.sq_norms.clone()
        sq[0] = -1e-30  # sample 0: a round-off-sized negative squared norm in every layer
        term.sq_norms = sq
        if term.weight_sq is not None:
            weight_sq = term.weight_sq.clone()
            weight_sq[0] = -1e-30
            term.weight_sq = weight_sq
        return term

    monkeypatch.setattr(persample, "_layer_term", below_zero)
    model = _model(3)
    x, y = _data(5, seed=3)
    res = clipped_group_sum(model, _ce, x, y, group_size=1, clip_norm=0.1, engine="layer", clip_scope=clip_scope)
    assert bool(torch.isfinite(res.norms).all())
    if clip_scope == "global":  # per-tensor reports the largest tensor norm, the biases' included
        assert res.norms[0] == 0.0
    assert all(bool(torch.isfinite(s).all()) for s in res.clipped_sum)
