"""Clipped sums of per-group gradients: the inner computation of Algorithm 1 of paper 003.

One round of the generalised DP-SGD of van Dijk et al. (paper 003, Algorithm 1 with eq. (22)) splits
the round's samples into m groups S_{b,h} of size s, computes each group's *mean* gradient
a_h = (1/s) Σ_{i∈S_{b,h}} ∇f(w, ξ_i), clips each to [a_h]_C = a_h / max{1, ‖a_h‖/C} and sums:
U = Σ_h [a_h]_C.  s = 1 is individual clipping (DP-SGD), one group of the whole batch is batch
clipping, anything in between is mixed clipping.  ModelMix's l2 + l∞ clipping (paper 002,
Algorithm 2) additionally truncates each coordinate of the clipped vector to ±C/√p.

Engines (all give the same U up to floating-point rounding; the tests check each one against an
explicit loop over groups):

* ``"vmap"``  -- ``torch.func``: ``vmap(grad(group loss))`` materialises the m group gradients,
  then a fused clip + weighted sum.  Works for any model without batch-dependent layers.
* ``"layer"`` -- per-layer "book-keeping" for models whose trainable parameters all sit in
  ``nn.Linear`` / ``nn.Conv2d`` (all models of :mod:`dpcore.models`).  One forward, one backward that
  computes only the gradients w.r.t. layer outputs (no weight gradients), then per layer either the
  group gradients (materialised: the per-sample weight gradients as one grouped convolution with the
  samples as groups -- the formulation of torch.func's batching rule, without vmap's overhead -- and
  for Linear layers one batched matmul) or only their norms by the ghost-norm identity
  ‖Σ_t g_t a_tᵀ‖² = Σ_{t,t'} (a_t·a_t')(g_t·g_t') (Goodfellow 2015; Li et al. 2022) followed by one
  re-weighted weight-gradient product (the clip factors applied to the output gradients), whichever a
  cost model says is cheaper for that layer (ghost for small feature maps with many channels).  For
  convolutions the patch Gram matrix (a_t·a_t') is either taken from the unfolded input or, cheaper, summed
  from shifted blocks of the Gram matrix of the input pixels (no unfolding; see ``_conv_input_gram_shift``).
  ModelMix's l2 + l∞ clipping needs the group gradients themselves: they are clipped, truncated and
  summed a chunk of groups at a time (``_truncated_sums``) while in cache, and conv layers with few output
  positions also compute them chunk by chunk (:data:`TRUNC_CHUNK_MAX_POSITIONS`).
* ``"loop"``  -- one ordinary backward per group (used when a group does not fit in the physical
  micro-batch, and for groups of at least :data:`LOOP_MIN_GROUP` samples).
* ``"batch"`` -- a single group (batch clipping): one backward of the summed loss per micro-batch,
  no per-sample gradients at all.
* ``"auto"``  -- ``"batch"`` for one group, ``"loop"`` for large groups, else ``"layer"`` where
  supported (falling back to ``"vmap"``).  The choice depends only on the model and the sizes, so
  runs stay bitwise reproducible on the CPU.

Groups are consecutive runs of the (already randomly ordered) batch: groups of ``group_size``
samples, the last one possibly shorter.  Micro-batches hold whole groups, so the logical batch
size never bounds memory.

``clip_scope="per_tensor"`` clips each parameter tensor of a_h to C on its own instead of the whole vector
(the paper-003 authors' practice, issue 21; see :data:`PARAMETER_CLIP_SCOPES`): every engine
supports it, and the whole vector is then bounded by C·√k for k tensors, not by C.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.func import functional_call, grad, vmap

from dpcore.validation import check_choice, check_positive, check_positive_int

__all__ = [
    "ENGINES",
    "LossFn",
    "GroupClipResult",
    "clip_factors",
    "truncate_linf",
    "clipped_group_sum",
    "layer_engine_supported",
    "conv_route_taken",
    "shift_gram_macs",
    "LayerEngineError",
    "per_group_gradients",
    "PARAMETER_CLIP_SCOPES",
]

ENGINES = ("auto", "layer", "vmap", "loop", "batch")
#: How a group vector a_h is clipped to C (issue 21; evidence: repository MisaNguyen/DPSGD, file
#: PyTorchProjectFramework/CIFAR10_train.py):
#:
#: * ``"global"`` -- [a_h]_C = a_h / max{1, ‖a_h‖/C} over the whole vector (paper 003 §2, Algorithm 1 line 21).
#: * ``"per_tensor"`` -- each parameter tensor of a_h is clipped to C on its own, as the authors' loop
#:   ``for param in model_clone.parameters(): ... torch.nn.utils.clip_grad_norm_(param.grad,
#:   max_norm=args.max_grad_norm)`` does (commit 93f6075e507afadb350eded668b364efeb29b07d, lines 404 and 422; the
#:   same call on the averaged gradient at commit 8186d9f9667be0cc73937a6b82ac458754e72206, lines 441 and 460).
#:   With k tensors the whole vector is then bounded by C·√k, not C: the sensitivity of one round is √k times
#:   larger, so the run is accounted with clip norm C·√k (equivalently the noise multiplier σ/√k).
PARAMETER_CLIP_SCOPES = ("global", "per_tensor")
#: per-sample loss: (model output, targets) -> losses of shape (n,)
LossFn = Callable[[Tensor, Tensor], Tensor]
#: ghost norm is used for a Linear layer when its Gram cost is below this multiple of the materialised size
GHOST_COST_FACTOR = 30.0
#: cost of one pass over a float in memory, in multiply-adds (CPU cost model of the conv layers)
MEMORY_PASS_COST = 16.0
#: convolutions with at most this many inputs per output (C·k_h·k_w) use the grouped-convolution path
SMALL_CONV_FAN_IN = 27
#: materialised conv gradients come from unfold + batched matmul when T² ≤ this multiple of C·k_h·k_w (few output
#: positions, many inputs per output: 002's ScatterNet CNN, the 7×7 and 3×3 layers of 003's CNN), otherwise from
#: the grouped weight-gradient convolution (measured on a 2-core CPU, 256 samples, 1 thread: 243→64 at 8×8
#: 0.58 vs 0.74 s, 64→64 at 4×4 0.05 vs 0.12 s; 64→64 at 8×8 0.15 vs 0.12 s, 32→64 at 14×14 0.13 vs 0.06 s)
BMM_ROUTE_FACTOR = 5.0
#: the materialise route computes a conv layer's per-sample gradients (grouped weight-gradient convolution) for this
#: many samples per call into one tensor: oneDNN is faster on these than on the whole batch at once (2-core CPU,
#: 2 threads, glibc allocator tuned, 256 samples, per-sample gradients and norms: ResNet-20's 16→16 at 32×32
#: 4.1 ms against 5.3 ms, 16→32 stride 2 2.7 against 3.3 ms; 003's 32→64 at 14×14 6.9 against 7.1 ms)
MATERIALISE_CHUNK = 64
#: l2 + l∞ clipping (paper 002) materialises the group gradients of all layers for this many floats' worth of groups
#: at a time, so that they are clipped, truncated and summed while in cache instead of as a whole (m, d) tensor
#: (measured on a 2-core CPU, 1 thread, 002's ScatterNet CNN, 256 samples: the 243→64 layer's per-sample gradients,
#: norms, truncation and sum in chunks of 8 samples 0.09 s against 0.29 s for the whole batch at once)
TRUNC_CHUNK_FLOATS = 2**21
#: in those chunks, per-sample conv gradients come from unfold + batched matmul when T² ≤ this multiple of C·k_h·k_w,
#: else from the grouped weight-gradient convolution (same machine, chunks of 8: 243→64 at 8×8 grouped 54 ms against
#: 76 ms; 64→64 at 4×4 batched matmul 5.7 ms against 10.5 ms)
TRUNC_BMM_ROUTE_FACTOR = 1.0
#: ... but only conv layers with at most this many output positions T per sample (per-sample gradients large against
#: their T multiply-adds per float); the others compute the whole block's per-sample gradients in one call and hand
#: out views of it (same machine, idle, 1 thread: ResNet-20 at batch 128 0.27-0.29 s per step, 0.36 s with no conv
#: layer chunked, 0.34 s before chunking; 002's ScatterNet CNN at 256 0.11 s against 0.26 s before chunking)
TRUNC_CHUNK_MAX_POSITIONS = 256
#: groups of at least this many samples are cheaper as one ordinary backward each ("loop")
LOOP_MIN_GROUP = 16
#: largest Gram-matrix block (floats) the ghost norm may allocate per micro-batch
GHOST_MAX_FLOATS = 2**25
#: tests only: force every eligible conv layer onto one route ("materialise", "unfold" or "shift")
_FORCE_CONV_ROUTE: str | None = None


@dataclass
class GroupClipResult:
    """U = Σ_h [a_h]_C per trainable parameter, plus what the run record needs."""

    clipped_sum: list[Tensor]
    #: ‖a_h‖ of every group before clipping (on the model's device); with per-tensor clipping the largest
    #: per-tensor norm of the group, so that ``norms > C`` still marks the groups the clipping changed
    norms: Tensor
    n_groups: int
    engine: str


def clip_factors(norms: Tensor, clip_norm: float) -> Tensor:
    """Factors 1 / max{1, ‖a‖/C} of the clipping map [a]_C (paper 003, §2; C = inf gives 1).

    >>> clip_factors(torch.tensor([0.5, 2.0, 0.0]), 1.0).tolist()
    [1.0, 0.5, 1.0]
    """
    if math.isinf(clip_norm):
        return torch.ones_like(norms)
    return torch.clamp(norms / clip_norm, min=1.0).reciprocal()


def truncate_linf(x: Tensor, clip_norm: float, linf_p: int) -> Tensor:
    """Coordinate truncation of ModelMix's Algorithm 2 (paper 002): clamp to ±C/√p."""
    bound = clip_norm / math.sqrt(linf_p)
    return x.clamp(-bound, bound)


def _truncate_linf_inplace(x: Tensor, clip_norm: float, linf_p: int) -> Tensor:
    """:func:`truncate_linf` in place (returns ``x``)."""
    bound = clip_norm / math.sqrt(linf_p)
    return x.clamp_(-bound, bound)


def _trainable(model: nn.Module) -> list[tuple[str, nn.Parameter]]:
    return [(n, p) for n, p in model.named_parameters() if p.requires_grad]


def _group_sizes(n: int, group_size: int) -> list[int]:
    full, rest = divmod(n, group_size)
    return [group_size] * full + ([rest] if rest else [])


# --------------------------------------------------------------------------------------------
# the layer ("book-keeping" / ghost-norm) engine
# --------------------------------------------------------------------------------------------
class LayerEngineError(ValueError):
    """The model's forward pass breaks an assumption of the layer engine (auto mode falls back to vmap)."""


_LAYER_TYPES = (nn.Linear, nn.Conv2d)


def layer_engine_supported(model: nn.Module) -> tuple[bool, str]:
    """Whether every trainable parameter is the weight or bias of an ``nn.Linear`` / ``nn.Conv2d``.

    Also refuses batch normalisation (per-sample gradients are undefined under it) and grouped
    convolutions.  Returns ``(ok, reason)``.
    """
    covered: set[int] = set()
    for name, module in model.named_modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm) and module.training:
            return False, f"{name or type(module).__name__} is batch normalisation"
        if isinstance(module, _LAYER_TYPES):
            if isinstance(module, nn.Conv2d) and (
                module.groups != 1 or module.padding_mode != "zeros" or isinstance(module.padding, str)
            ):
                return False, f"{name} is a grouped, string-padded or non-zero-padded convolution"
            covered.update(id(p) for p in module.parameters(recurse=False) if p.requires_grad)
    for name, p in _trainable(model):
        if id(p) not in covered:
            return False, f"parameter {name} is not in an nn.Linear or nn.Conv2d"
    return True, ""


class _Tape:
    """Forward hooks recording (input, output) of every trainable Linear / Conv2d."""

    def __init__(self, model: nn.Module) -> None:
        self.modules = [
            m for m in model.modules() if isinstance(m, _LAYER_TYPES) and any(p.requires_grad for p in m.parameters())
        ]
        self.records: dict[nn.Module, tuple[Tensor, Tensor, int]] = {}
        self.handles: list = []

    def _hook(self, module: nn.Module, inputs: tuple, output: Tensor) -> None:
        if module in self.records:
            raise LayerEngineError(
                f"engine='layer' needs each layer called once per forward; {module} was called twice"
            )
        self.records[module] = (inputs[0].detach(), output, output._version)

    def __enter__(self) -> _Tape:
        self.records.clear()
        self.handles = [m.register_forward_hook(self._hook) for m in self.modules]
        return self

    def __exit__(self, *exc: object) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []


@dataclass
class _LayerTerm:
    """One layer's contribution: squared norms of its m group gradients and how to sum them clipped."""

    module: nn.Module
    sq_norms: Tensor  # (m,); with ``weight_groups``, of the bias alone
    weight_sum: Callable[[Tensor], Tensor] | None  # c (m,) -> Σ_h c_h ∇_W a_h
    bias: Tensor | None  # (m, Dout) group gradients of the bias
    weight_sq: Tensor | None = None  # (m,) squared norms of the weight's group gradients alone (per-tensor clipping)
    #: l2 + l∞ clipping: (lo, hi) -> the weight's group gradients of groups lo..hi-1, a fresh (hi - lo, …) tensor
    weight_groups: Callable[[int, int], Tensor] | None = None


def _bias_terms(module: nn.Module, g: Tensor, m: int) -> Tensor | None:
    if module.bias is None or not module.bias.requires_grad:
        return None
    per_sample = g.reshape(g.shape[0], -1, g.shape[-1]).sum(1) if isinstance(module, nn.Linear) else g.sum((2, 3))
    return per_sample.reshape(m, -1, per_sample.shape[-1]).sum(1)


def _materialised(shape: torch.Size, groups: Tensor) -> tuple[Tensor, Callable[[Tensor], Tensor]]:
    """(norm², weight_sum) for materialised group gradients ``groups`` (m, *shape)."""
    m = groups.shape[0]
    sq = torch.linalg.vector_norm(groups.reshape(m, -1), dim=1).pow(2)

    def weight_sum(c: Tensor) -> Tensor:
        return torch.tensordot(c, groups, dims=([0], [0])).reshape(shape)

    return sq, weight_sum


def _group_slices(per_sample: Callable[[int, int], Tensor], s: int) -> Callable[[int, int], Tensor]:
    """(lo, hi) -> group gradients of groups lo..hi-1, from (lo, hi) -> per-sample gradients of samples lo..hi-1."""

    def weight_groups(lo: int, hi: int) -> Tensor:
        per = per_sample(lo * s, hi * s)
        return per.reshape(hi - lo, s, *per.shape[1:]).sum(1) if s > 1 else per

    return weight_groups


def _linear_term(module: nn.Linear, a: Tensor, g: Tensor, m: int, s: int, force: bool) -> _LayerTerm:
    n = a.shape[0]
    rows_a = a.reshape(n, -1, a.shape[-1])  # (n, T, Din)
    rows_g = g.reshape(n, -1, g.shape[-1])  # (n, T, Dout)
    t = rows_a.shape[1]
    length, din, dout = s * t, rows_a.shape[2], rows_g.shape[2]
    bias = _bias_terms(module, g, m)
    sq = torch.zeros(m, dtype=g.dtype, device=g.device) if bias is None else bias.pow(2).sum(1)
    if not module.weight.requires_grad:
        return _LayerTerm(module, sq, None, bias)
    ghost = not force and length * length * (din + dout) < GHOST_COST_FACTOR * din * dout
    if ghost and m * length * length <= GHOST_MAX_FLOATS:
        if length == 1:
            sq_w = rows_a.reshape(m, -1).pow(2).sum(1) * rows_g.reshape(m, -1).pow(2).sum(1)
        else:
            ga = rows_a.reshape(m, length, din)
            gg = rows_g.reshape(m, length, dout)
            sq_w = (torch.bmm(ga, ga.transpose(1, 2)) * torch.bmm(gg, gg.transpose(1, 2))).sum((1, 2))

        def weight_sum(c: Tensor) -> Tensor:
            w = rows_g * c.repeat_interleave(s).reshape(-1, 1, 1)
            return w.reshape(-1, dout).t().mm(rows_a.reshape(-1, din))

        return _LayerTerm(module, sq + sq_w, weight_sum, bias, sq_w)

    def weight_groups(lo: int, hi: int) -> Tensor:
        ga, gg = rows_a[lo * s : hi * s], rows_g[lo * s : hi * s]
        return torch.bmm(gg.reshape(hi - lo, length, dout).transpose(1, 2), ga.reshape(hi - lo, length, din))

    if force:
        return _LayerTerm(module, sq, None, bias, weight_groups=weight_groups)
    sq_w, weight_sum = _materialised(module.weight.shape, weight_groups(0, m))
    return _LayerTerm(module, sq + sq_w, weight_sum, bias, sq_w)


def shift_gram_macs(cin: int, cout: int, length: int, pixels: int) -> int:
    """Multiply-adds per sample of the ``"shift"`` ghost norm's two Gram products (:func:`_conv_input_gram_shift`):
    the input pixels' L²·cin and the output gradients' T²·cout, for ``length`` = T and ``pixels`` = L."""
    return pixels * pixels * cin + length * length * cout


def _conv_route(cin: int, cout: int, k: int, length: int, pixels: int) -> str:
    """Cheapest way (CPU cost model, multiply-adds) to get a conv layer's per-sample norms and clipped sum,
    for ``k`` kernel positions, ``length`` = T output positions and ``pixels`` = L input pixels per sample.

    ``"materialise"``: per-sample weight gradients (cout·cin·k·T each) plus a few memory passes over them;
    ``"unfold"``: ghost norm with the Gram matrix of the unfolded input (T²·(cin·k + cout));
    ``"shift"``: ghost norm with the Gram matrix of the input pixels (L²·cin, see :func:`_conv_input_gram_shift`);
    both ghost routes add one re-weighted weight-gradient convolution of the whole batch.  On the paper-003 CNN
    (MNIST, 28×28 input) the 14×14 layer materialises, the 7×7 and 3×3 layers take the pixel Gram route:

    >>> _conv_route(32, 64, 9, 196, 196), _conv_route(64, 64, 9, 49, 49), _conv_route(64, 128, 9, 9, 9)
    ('materialise', 'shift', 'shift')
    """
    ck = cin * k
    cost_mat = cout * ck * length + 3 * MEMORY_PASS_COST * cout * ck
    reweighted = 0.5 * cout * ck * length + MEMORY_PASS_COST * cout * length
    gram_g = length * length * cout
    # the Gram products are small batched matmuls: weighted twice (measured on a 2-core CPU)
    cost_unfold = 2 * (gram_g + length * length * ck) + MEMORY_PASS_COST * (length * length + ck * length) + reweighted
    cost_shift = 2 * shift_gram_macs(cin, cout, length, pixels)
    cost_shift += MEMORY_PASS_COST * (k * length * length + pixels * pixels)
    cost_shift += reweighted
    costs = {"materialise": cost_mat, "unfold": cost_unfold, "shift": cost_shift}
    return min(costs, key=costs.__getitem__)


def _conv_input_gram_unfold(module: nn.Conv2d, a: Tensor, g: Tensor) -> Tensor:
    """‖∇_W f_i‖² = Σ_{p,p'} (a_p·a_p')(g_p·g_p') with a_p the unfolded input patch at output position p."""
    n = a.shape[0]
    cols = nn.functional.unfold(
        a, module.kernel_size, dilation=module.dilation, padding=module.padding, stride=module.stride
    )
    g_flat = g.reshape(n, g.shape[1], -1)
    gram_g = torch.bmm(g_flat.transpose(1, 2), g_flat)
    gram_a = torch.bmm(cols.transpose(1, 2), cols)
    return (gram_g * gram_a).sum((1, 2))


def _valid_offsets(size_in: int, size_out: int, pad: int, stride: int, dilation: int, k: int) -> tuple[int, int, int]:
    """Output indices p whose input index stride·p + dilation·k - pad lies inside the (unpadded) input:
    (first p, how many, input index of the first)."""
    off = dilation * k - pad
    first = max(0, (-off + stride - 1) // stride)
    last = min(size_out - 1, (size_in - 1 - off) // stride)
    return first, last - first + 1, stride * first + off


def _conv_input_gram_shift(module: nn.Conv2d, a: Tensor, g: Tensor) -> Tensor:
    """The same ghost norm without unfolding.  The unfolded patches satisfy a_p·a_p' = Σ_k x[σp + δk]·x[σp' + δk]
    (x the input pixels as cin-vectors, zero outside the image; σ the stride, δ the dilation, k the kernel
    offsets), so with the pixel Gram matrix X = xᵀx of the unpadded input (L × L, L = H·W)

        ‖∇_W f_i‖² = Σ_{p,p'} (g_p·g_p') · Σ_k X[σp + δk, σp' + δk],

    L²·cin multiply-adds for X instead of T²·cin·k_h·k_w for the Gram matrix of the unfolded input.  The sum over
    the k_h·k_w kernel offsets is separable: first over the column offsets (k_w slice additions into an
    H × W_out × H × W_out array), then over the row offsets (k_h more), all with the samples first, so that neither
    a transposed copy of X nor a strided final product is needed."""
    n, cin, h, w = a.shape
    cout, ho, wo = g.shape[1:]
    x_flat = a.reshape(n, cin, h * w)
    gram_x = torch.bmm(x_flat.transpose(1, 2), x_flat).reshape(n, h, w, h, w)
    g_flat = g.reshape(n, cout, ho * wo)
    gram_g = torch.bmm(g_flat.transpose(1, 2), g_flat).reshape(n, -1)
    (sh, sw), (dh, dw), (ph, pw) = module.stride, module.dilation, module.padding
    cols = torch.zeros(n, h, wo, h, wo, dtype=g.dtype, device=g.device)
    for j in range(module.kernel_size[1]):
        c0, nc, ci = _valid_offsets(w, wo, pw, sw, dw, j)
        if nc > 0:
            out, src = slice(c0, c0 + nc), slice(ci, ci + sw * (nc - 1) + 1, sw)
            cols[:, :, out, :, out] += gram_x[:, :, src, :, src]
    acc = torch.zeros(n, ho, wo, ho, wo, dtype=g.dtype, device=g.device)
    for i in range(module.kernel_size[0]):
        r0, nr, ri = _valid_offsets(h, ho, ph, sh, dh, i)
        if nr > 0:
            out, src = slice(r0, r0 + nr), slice(ri, ri + sh * (nr - 1) + 1, sh)
            acc[:, out, :, out, :] += cols[:, src, :, src, :]
    return (gram_g * acc.reshape(n, -1)).sum(1)


def conv_route_taken(module: nn.Conv2d, a_shape: Sequence[int], g_shape: Sequence[int], s: int = 1,
                     force: bool = False, prefer: str | None = None) -> str:  # fmt: skip
    """The route :func:`_conv_term` takes for a conv layer with input ``a_shape`` and output gradient ``g_shape``
    (N, C, H, W), groups of ``s`` samples and ``force`` (l∞ truncation: per-sample gradients needed):
    ``"grouped forward"`` (few inputs per output), else ``prefer`` (default: :func:`_conv_route`'s cheapest) among
    ``"materialise"``, ``"shift"``, ``"unfold"``, downgraded where a Gram matrix would exceed
    :data:`GHOST_MAX_FLOATS` or the ghost norm does not apply (s > 1, truncation)."""
    n, cin, h, w = a_shape
    kh, kw = module.kernel_size
    if cin * kh * kw <= SMALL_CONV_FAN_IN:
        return "grouped forward"
    length, pixels = g_shape[2] * g_shape[3], h * w  # output positions T, input pixels L
    route = prefer or _FORCE_CONV_ROUTE or _conv_route(cin, g_shape[1], kh * kw, length, pixels)
    check_choice("prefer", route, ("materialise", "shift", "unfold"))
    if force or s != 1:
        return "materialise"
    if route == "shift" and n * pixels * pixels > GHOST_MAX_FLOATS:
        route = "unfold"
    if route == "unfold" and n * length * length > GHOST_MAX_FLOATS:
        route = "materialise"
    return route


def _conv_per_sample(module: nn.Conv2d, a: Tensor, g: Tensor, route: str, bmm_factor: float) -> Tensor:
    """Per-sample weight gradients (n, *weight.shape) of the samples of ``a`` (inputs) and ``g`` (output gradients)
    by ``route`` ("grouped forward" or "materialise"; the latter by unfold + batched matmul when
    T² ≤ ``bmm_factor``·C·k_h·k_w, else by a grouped weight-gradient convolution)."""
    n, cin = a.shape[0], a.shape[1]
    cout = g.shape[1]
    shape = module.weight.shape
    kh, kw = module.kernel_size
    if route == "grouped forward":
        # few input channels (first layers): per-sample gradients as one grouped convolution of the
        # inputs (samples as groups) with the output gradients as filters
        out = nn.functional.conv2d(
            a.transpose(0, 1), g.reshape(n * cout, 1, *g.shape[2:]), padding=module.padding,
            stride=module.dilation, dilation=module.stride, groups=n,
        )[:, :, :kh, :kw]  # fmt: skip
        return out.reshape(cin, n, cout, kh, kw).permute(1, 2, 0, 3, 4)
    length = g.shape[2] * g.shape[3]  # output positions T
    if length * length <= bmm_factor * cin * kh * kw:
        # per-sample gradients g_i (cout × T) · cols_iᵀ (T × cin·k) of the unfolded input, one batched matmul
        cols = nn.functional.unfold(
            a, module.kernel_size, dilation=module.dilation, padding=module.padding, stride=module.stride
        )
        return torch.bmm(g.reshape(n, cout, length), cols.transpose(1, 2)).reshape(n, *shape)
    # per-sample gradients as one grouped weight-gradient convolution (samples as groups): oneDNN's
    # backward-weights kernel, the formulation torch.func's batching rule uses as well
    return torch.nn.grad.conv2d_weight(
        a.reshape(1, n * cin, *a.shape[2:]), (n * cout, cin, kh, kw), g.reshape(1, n * cout, *g.shape[2:]),
        stride=module.stride, padding=module.padding, dilation=module.dilation, groups=n,
    ).reshape(n, *shape)  # fmt: skip


def _conv_term(module: nn.Conv2d, a: Tensor, g: Tensor, m: int, s: int, force: bool) -> _LayerTerm:
    """Conv2d group gradients: materialised per-sample gradients (a grouped convolution) or the ghost norm
    (unfolded-input or pixel Gram matrix) plus one re-weighted weight-gradient convolution, whichever
    :func:`_conv_route` says is cheaper.  Ghost routes need s = 1 and no l∞ truncation (``force``); with
    ``force`` the group gradients are left to :func:`_truncated_sums`, a chunk of groups at a time."""
    bias = _bias_terms(module, g, m)
    sq = torch.zeros(m, dtype=g.dtype, device=g.device) if bias is None else bias.pow(2).sum(1)
    if not module.weight.requires_grad:
        return _LayerTerm(module, sq, None, bias)
    shape = module.weight.shape
    route = conv_route_taken(module, a.shape, g.shape, s, force)
    if force:
        if g.shape[2] * g.shape[3] <= TRUNC_CHUNK_MAX_POSITIONS:  # few positions: memory-bound, chunk by chunk

            def per_sample(lo: int, hi: int) -> Tensor:
                return _conv_per_sample(module, a[lo:hi], g[lo:hi], route, TRUNC_BMM_ROUTE_FACTOR)

        else:  # many positions: compute-bound, one call for the block; the chunks are views of it
            whole = _conv_per_sample(module, a, g, route, BMM_ROUTE_FACTOR)

            def per_sample(lo: int, hi: int) -> Tensor:
                return whole[lo:hi]

        return _LayerTerm(module, sq, None, bias, weight_groups=_group_slices(per_sample, s))
    if route in ("shift", "unfold"):  # ghost norm: norms only, then one re-weighted weight-gradient convolution
        gram = _conv_input_gram_shift if route == "shift" else _conv_input_gram_unfold
        sq_w = gram(module, a, g)

        def weight_sum(c: Tensor) -> Tensor:
            return torch.nn.grad.conv2d_weight(
                a, shape, g * c.reshape(-1, 1, 1, 1), stride=module.stride, padding=module.padding,
                dilation=module.dilation,
            )  # fmt: skip

        return _LayerTerm(module, sq + sq_w, weight_sum, bias, sq_w)
    n = a.shape[0]
    if route == "materialise" and n > MATERIALISE_CHUNK:
        per = torch.empty((n, *shape), dtype=g.dtype, device=g.device)
        for lo in range(0, n, MATERIALISE_CHUNK):
            hi = min(n, lo + MATERIALISE_CHUNK)
            per[lo:hi] = _conv_per_sample(module, a[lo:hi], g[lo:hi], route, BMM_ROUTE_FACTOR)
    else:
        per = _conv_per_sample(module, a, g, route, BMM_ROUTE_FACTOR)
    groups = per.reshape(m, s, *shape).sum(1) if s > 1 else per
    sq_w, weight_sum = _materialised(shape, groups)
    return _LayerTerm(module, sq + sq_w, weight_sum, bias, sq_w)


def _layer_term(module: nn.Module, a: Tensor, g: Tensor, m: int, s: int, materialize: bool) -> _LayerTerm:
    if isinstance(module, nn.Linear):
        return _linear_term(module, a, g, m, s, materialize)
    return _conv_term(module, a, g, m, s, materialize)


def _layer_block(
    model: nn.Module,
    loss_fn: LossFn,
    x: Tensor,
    y: Tensor,
    group_size: int,
    materialize: bool,
) -> tuple[list[_LayerTerm], int]:
    """Forward + output-gradient backward for one block of m equal groups of ``group_size``."""
    n = x.shape[0]
    m = n // group_size
    tape = _Tape(model)
    with tape:
        out = model(x)
    losses = loss_fn(out, y)
    loss = losses.sum() / group_size
    mods = [mod for mod in tape.modules if mod in tape.records]
    outputs = [tape.records[mod][1] for mod in mods]
    for mod in mods:
        if tape.records[mod][1]._version != tape.records[mod][2]:
            raise LayerEngineError(
                f"engine='layer': the output of {mod} is modified in place (e.g. ReLU(inplace=True))"
            )
    grads = torch.autograd.grad(loss, outputs, allow_unused=True)
    terms = []
    for mod, g in zip(mods, grads, strict=True):
        a = tape.records[mod][0]
        if g is None:
            g = torch.zeros_like(tape.records[mod][1])
        terms.append(_layer_term(mod, a, g.detach(), m, group_size, materialize))
    return terms, m


def _add(sums: dict[int, Tensor], p: Tensor, val: Tensor) -> None:
    sums[id(p)] = sums[id(p)] + val if id(p) in sums else val


def _layer_engine(
    model: nn.Module,
    loss_fn: LossFn,
    x: Tensor,
    y: Tensor,
    group_size: int,
    clip_norm: float,
    linf_p: int | None,
    sums: dict[int, Tensor],
    per_tensor: bool = False,
) -> Tensor:
    """Add Σ_h [a_h]_C of one micro-batch (whole groups) into ``sums``; return the group norms."""
    n = x.shape[0]
    sizes = _group_sizes(n, group_size)
    blocks = []
    full = (n // group_size) * group_size
    if full:
        blocks.append((0, full, group_size))
    if full < n:
        blocks.append((full, n, n - full))
    all_norms = []
    for start, stop, s in blocks:
        terms, m = _layer_block(model, loss_fn, x[start:stop], y[start:stop], s, materialize=linf_p is not None)
        if per_tensor:
            all_norms.append(_layer_per_tensor(terms, m, clip_norm, sums, x.device))
            continue
        if linf_p is not None:
            all_norms.append(_truncated_sums(terms, m, clip_norm, linf_p, sums, x.device))
            continue
        sq = torch.stack([t.sq_norms for t in terms]).sum(0) if terms else torch.zeros(m, device=x.device)
        # the ghost norms are sums of Gram products: a sample whose gradient is (nearly) zero, e.g. a confidently
        # right prediction, can come out a hair below 0 by round-off, and its square root NaN (issue 22's [19] run
        # with private normalisation stopped on it at step 435); the norm of such a gradient is 0
        norms = sq.clamp_min(0.0).sqrt()
        c = clip_factors(norms, clip_norm).to(sq.dtype)
        for t in terms:
            mod = t.module
            if t.weight_sum is not None:
                _add(sums, mod.weight, t.weight_sum(c))
            if t.bias is not None:
                _add(sums, mod.bias, torch.tensordot(c, t.bias, dims=([0], [0])))
        all_norms.append(norms.detach())
    assert sum(len(v) for v in all_norms) == len(sizes)
    return torch.cat(all_norms)


def _truncated_sums(terms: list[_LayerTerm], m: int, clip_norm: float, linf_p: int, sums: dict[int, Tensor],
                    device: torch.device) -> Tensor:  # fmt: skip
    """Add Σ_h trunc([a_h]_C) (paper 002, Algorithm 2: l2 clipping, then each coordinate to ±C/√p) of m groups
    into ``sums``, a chunk of groups at a time (:data:`TRUNC_CHUNK_FLOATS`): each chunk's group gradients of every
    layer are materialised, their norms taken, then scaled, truncated and summed in place while they are in
    cache; returns the m group norms."""
    per_group = sum(
        (t.module.weight.numel() if t.weight_groups is not None else 0)
        + (t.bias.shape[1] if t.bias is not None else 0)
        for t in terms
    )
    chunk = max(1, TRUNC_CHUNK_FLOATS // max(per_group, 1))
    all_norms = []
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        parts: list[tuple[Tensor, Tensor]] = []  # (parameter, its group gradients of groups lo..hi-1)
        sq_layers = []
        for t in terms:
            sq_t = t.sq_norms[lo:hi]  # the bias's
            if t.bias is not None:
                parts.append((t.module.bias, t.bias[lo:hi].clone()))
            if t.weight_groups is not None:
                w = t.weight_groups(lo, hi)
                sq_t = sq_t + torch.linalg.vector_norm(w.reshape(hi - lo, -1), dim=1).pow(2)
                parts.append((t.module.weight, w))
            sq_layers.append(sq_t)
        sq = torch.stack(sq_layers).sum(0) if sq_layers else torch.zeros(hi - lo, device=device)
        norms = sq.sqrt()
        c = clip_factors(norms, clip_norm).to(sq.dtype)
        for p, grads in parts:
            scaled = grads.mul_(c.reshape((-1,) + (1,) * (grads.dim() - 1)))
            _add(sums, p, _truncate_linf_inplace(scaled, clip_norm, linf_p).sum(0))
        all_norms.append(norms.detach())
    return torch.cat(all_norms) if all_norms else torch.zeros(0, device=device)


def _layer_per_tensor(terms: list[_LayerTerm], m: int, clip_norm: float, sums: dict[int, Tensor],
                      device: torch.device) -> Tensor:  # fmt: skip
    """Per-tensor clipping in the layer engine: the weight and the bias of each layer get their own clip factors
    (from the weight's squared norms and the bias rows); returns the largest per-tensor norm of each group."""
    largest = torch.zeros(m, device=device, dtype=terms[0].sq_norms.dtype if terms else torch.get_default_dtype())
    for t in terms:
        mod = t.module
        if t.weight_sum is not None:
            assert t.weight_sq is not None
            norms_w = t.weight_sq.clamp_min(0.0).sqrt()  # round-off below 0: see _layer_engine
            _add(sums, mod.weight, t.weight_sum(clip_factors(norms_w, clip_norm).to(norms_w.dtype)))
            largest = torch.maximum(largest, norms_w.detach().to(largest.dtype))
        if t.bias is not None:
            norms_b = torch.linalg.vector_norm(t.bias, dim=1)
            factors = clip_factors(norms_b, clip_norm).to(t.bias.dtype)
            _add(sums, mod.bias, torch.tensordot(factors, t.bias, dims=([0], [0])))
            largest = torch.maximum(largest, norms_b.detach().to(largest.dtype))
    return largest


# --------------------------------------------------------------------------------------------
# torch.func (vmap + grad) engine
# --------------------------------------------------------------------------------------------
def _vmap_group_grads(model: nn.Module, loss_fn: LossFn, x: Tensor, y: Tensor, s: int) -> list[Tensor]:
    """Gradients of the group-mean loss of m equal groups of size ``s``: list of (m, *p.shape)."""
    names = [n for n, _ in _trainable(model)]
    params = {n: p.detach() for n, p in _trainable(model)}
    fixed = {n: p.detach() for n, p in model.named_parameters() if not p.requires_grad}
    fixed.update(dict(model.named_buffers()))

    def group_loss(prm: dict[str, Tensor], xg: Tensor, yg: Tensor) -> Tensor:
        out = functional_call(model, (prm, fixed), (xg,))
        return loss_fn(out, yg).mean()

    m = x.shape[0] // s
    xs = x.reshape(m, s, *x.shape[1:])
    ys = y.reshape(m, s, *y.shape[1:])
    g = vmap(grad(group_loss), in_dims=(None, 0, 0), randomness="different")(params, xs, ys)
    return [g[n] for n in names]


def per_group_gradients(
    model: nn.Module, loss_fn: LossFn, x: Tensor, y: Tensor, group_size: int, *, engine: str = "vmap"
) -> list[Tensor]:
    """Unclipped group-mean gradients a_h, stacked: list over trainable parameters of ``(m, *shape)``.

    ``engine="vmap"`` uses ``torch.func``; ``engine="loop"`` one backward per group (reference).
    """
    check_choice("engine", engine, ("vmap", "loop"))
    group_size = check_positive_int("group_size", group_size)
    sizes = _group_sizes(x.shape[0], group_size)
    out: list[list[Tensor]] = [[] for _ in _trainable(model)]
    start = 0
    if engine == "vmap":
        full = (x.shape[0] // group_size) * group_size
        if full:
            for acc, g in zip(out, _vmap_group_grads(model, loss_fn, x[:full], y[:full], group_size), strict=True):
                acc.append(g)
        start = full
        sizes = sizes[len(sizes) - (1 if full < x.shape[0] else 0) :]
    params = [p for _, p in _trainable(model)]
    for size in sizes:
        xs, ys = x[start : start + size], y[start : start + size]
        loss = loss_fn(model(xs), ys).mean()
        for acc, g in zip(out, torch.autograd.grad(loss, params, allow_unused=True), strict=True):
            acc.append((torch.zeros_like(acc[0][0]) if g is None else g).unsqueeze(0))
        start += size
    return [torch.cat(a) for a in out]


def _sum_clipped(
    grads: Sequence[Tensor], clip_norm: float, linf_p: int | None, per_tensor: bool = False
) -> tuple[list[Tensor], Tensor]:
    """Fused clip + sum of materialised group gradients (list of (m, *shape))."""
    m = grads[0].shape[0]
    if per_tensor:  # each tensor's rows clipped by their own norms (the module docstring's per-tensor scope)
        norms_t = [torch.linalg.vector_norm(g.reshape(m, -1), dim=1) for g in grads]
        sums = [torch.tensordot(clip_factors(n, clip_norm).to(g.dtype), g, dims=([0], [0]))
                for n, g in zip(norms_t, grads, strict=True)]  # fmt: skip
        return sums, torch.stack(norms_t).amax(0).detach()
    sq = torch.zeros(m, dtype=grads[0].dtype, device=grads[0].device)
    for g in grads:
        sq += torch.linalg.vector_norm(g.reshape(m, -1), dim=1).pow(2)
    norms = sq.sqrt()
    c = clip_factors(norms, clip_norm).to(sq.dtype)
    if linf_p is None:
        sums = [torch.tensordot(c, g, dims=([0], [0])) for g in grads]
    else:
        # in place (the group gradients are not used afterwards): see _materialised
        sums = [_truncate_linf_inplace(g.mul_(c.reshape((-1,) + (1,) * (g.dim() - 1))), clip_norm, linf_p).sum(0)
                for g in grads]  # fmt: skip
    return sums, norms.detach()


def _clip_single(
    grads: list[Tensor], clip_norm: float, linf_p: int | None, per_tensor: bool = False
) -> tuple[list[Tensor], Tensor]:
    """[a]_C of one gradient given as a list of tensors, in place (``torch._foreach`` kernels)."""
    if per_tensor:  # each tensor clipped to C on its own (the module docstring's per-tensor scope)
        norms_t = torch.stack(torch._foreach_norm(grads))
        factors = clip_factors(norms_t, clip_norm)
        torch._foreach_mul_(grads, list(factors.unbind()))
        return grads, norms_t.amax().reshape(1).detach()
    norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    factor = clip_factors(norm.reshape(1), clip_norm)[0]
    torch._foreach_mul_(grads, factor)
    if linf_p is not None:
        grads = [truncate_linf(g, clip_norm, linf_p) for g in grads]
    return grads, norm.reshape(1).detach()


def _batch_gradient(
    model: nn.Module, loss_fn: LossFn, x: Tensor, y: Tensor, chunk: int, params: list[Tensor]
) -> list[Tensor]:
    """Mean gradient (1/n) Σ ∇f over the whole batch, one backward of the summed loss per micro-batch."""
    n = x.shape[0]
    total: list[Tensor] | None = None
    for start in range(0, n, chunk):
        loss = loss_fn(model(x[start : start + chunk]), y[start : start + chunk]).sum() / n
        gs = torch.autograd.grad(loss, params, allow_unused=True)
        gs = [torch.zeros_like(p) if g is None else g for g, p in zip(gs, params, strict=True)]
        total = gs if total is None else [t + g for t, g in zip(total, gs, strict=True)]
    assert total is not None
    return total


def clipped_group_sum(
    model: nn.Module,
    loss_fn: LossFn,
    x: Tensor,
    y: Tensor,
    *,
    group_size: int,
    clip_norm: float,
    linf_p: int | None = None,
    engine: str = "auto",
    max_physical_batch: int | None = None,
    clip_scope: str = "global",
) -> GroupClipResult:
    """U = Σ_h [a_h]_C over consecutive groups of ``group_size`` samples of (x, y).

    a_h is the mean gradient of group h (paper 003, eq. (22)); [·]_C the l2 clipping map; with
    ``linf_p`` each clipped group vector is also truncated to ±C/√p (paper 002, Algorithm 2).
    ``clip_scope="per_tensor"`` clips each parameter tensor of a_h to C separately (the module docstring).
    ``group_size >= len(x)`` is batch clipping (one group).  An empty batch gives U = 0.
    ``max_physical_batch`` bounds the samples per forward pass.

    >>> lin = nn.Linear(2, 1, bias=False); _ = lin.weight.data.copy_(torch.tensor([[0.0, 0.0]]))
    >>> mse = lambda out, t: 0.5 * (out.squeeze(1) - t) ** 2
    >>> x = torch.tensor([[3.0, 4.0], [0.3, 0.4]]); y = torch.tensor([1.0, 1.0])
    >>> r = clipped_group_sum(lin, mse, x, y, group_size=1, clip_norm=1.0)
    >>> [round(v, 4) for v in r.clipped_sum[0].flatten().tolist()], [round(v, 4) for v in r.norms.tolist()]
    ([-0.9, -1.2], [5.0, 0.5])
    """
    check_choice("engine", engine, ENGINES)
    group_size = check_positive_int("group_size", group_size)
    clip_norm = check_positive("clip_norm", clip_norm, allow_inf=True)
    if linf_p is not None:
        linf_p = check_positive_int("linf_p", linf_p)
    per_tensor = check_choice("clip_scope", clip_scope, PARAMETER_CLIP_SCOPES) == "per_tensor"
    if per_tensor and linf_p is not None:
        raise ValueError("clip_scope='per_tensor' takes no linf_p (ModelMix's l∞ truncation is of the whole vector)")
    params = [p for _, p in _trainable(model)]
    if not params:
        raise ValueError("model has no trainable parameters")
    n = x.shape[0]
    chunk = max_physical_batch or max(n, 1)
    chunk = check_positive_int("max_physical_batch", chunk)
    if n == 0:
        return GroupClipResult([torch.zeros_like(p) for p in params], torch.zeros(0, device=x.device), 0, engine)
    single = group_size >= n
    auto = engine == "auto"
    if auto:
        if single:
            engine = "batch"
        elif group_size > chunk or group_size >= LOOP_MIN_GROUP:
            engine = "loop"
        else:
            engine = "layer" if layer_engine_supported(model)[0] else "vmap"
    if engine == "batch":
        if not single:
            raise ValueError(f"engine='batch' needs one group (group_size >= batch size {n}), got {group_size}")
        sums, norms = _clip_single(_batch_gradient(model, loss_fn, x, y, chunk, params), clip_norm, linf_p, per_tensor)
        return GroupClipResult(sums, norms, 1, engine)
    if engine == "loop":
        sums_l: list[Tensor] = [torch.zeros_like(p) for p in params]
        norms_l = []
        start = 0
        for size in _group_sizes(n, group_size):
            g = _batch_gradient(model, loss_fn, x[start : start + size], y[start : start + size], chunk, params)
            s_, nm = _clip_single(g, clip_norm, linf_p, per_tensor)
            torch._foreach_add_(sums_l, s_)
            norms_l.append(nm)
            start += size
        return GroupClipResult(sums_l, torch.cat(norms_l), len(norms_l), engine)
    if group_size > chunk:
        raise ValueError(f"engine={engine!r} needs group_size <= max_physical_batch, got {group_size} > {chunk}")
    per_chunk = max(1, chunk // group_size) * group_size
    if engine == "layer":
        ok, reason = layer_engine_supported(model)
        if not ok:
            raise ValueError(f"engine='layer' does not support this model: {reason}")
        acc: dict[int, Tensor] = {}
        norms_list = []
        try:
            for start in range(0, n, per_chunk):
                stop = min(n, start + per_chunk)
                norms_list.append(
                    _layer_engine(
                        model, loss_fn, x[start:stop], y[start:stop], group_size, clip_norm, linf_p, acc, per_tensor
                    )
                )
        except LayerEngineError:
            if not auto:
                raise
            engine = "vmap"  # e.g. an in-place activation after a layer: fall back to torch.func
        else:
            sums = [acc.get(id(p), torch.zeros_like(p)) for p in params]
            norms = torch.cat(norms_list)
            return GroupClipResult(sums, norms.detach(), norms.numel(), engine)
    # vmap
    sums = [torch.zeros_like(p) for p in params]
    norms_list = []
    for start in range(0, n, per_chunk):
        stop = min(n, start + per_chunk)
        grads = per_group_gradients(model, loss_fn, x[start:stop], y[start:stop], group_size, engine="vmap")
        s_, nm = _sum_clipped(grads, clip_norm, linf_p, per_tensor)
        sums = [a + b for a, b in zip(sums, s_, strict=True)]
        norms_list.append(nm)
    norms = torch.cat(norms_list)
    return GroupClipResult(sums, norms, norms.numel(), engine)
