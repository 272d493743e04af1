"""Models of the three training papers, all free of batch normalisation (per-sample gradients stay defined).

=====================  ==============================================================  ===========
name                   definition                                                      parameters
=====================  ==============================================================  ===========
``logistic``           Linear(d, 1), logit output (paper 000 convex experiments)       d + 1
``linear``             Linear(d, 1) (paper 001 insurance regression)                   d + 1
``softmax``            Flatten + Linear(d, k) (paper 001 obesity)                      (d+1)k
``lenet5``             LeNet-5 on 28×28 zero-padded to 32×32 (paper 003 App. H; paper 000 MNIST)   61,706
``cnn003``             Table 4 CNN of paper 003 + the Linear(128, 10) it omits (A4)    131,466
``resnet20``           CIFAR ResNet-20, GroupNorm(4, affine=False), option-A shortcut  268,346
``alexnet_cifar``      32×32 AlexNet of paper 000's CIFAR-10 runs (pytorch-cifar10)      23,272,266
``scatter_cnn``        Tramèr–Boneh CNN on J=2, L=8 scattering features (paper 002 Table I) 187,210 / 33,066
``scatter_linear``     Tramèr–Boneh linear model on scattering features (reference controls) 155,530 / 39,700
``sample_convnet``     Opacus's MNIST SampleConvNet; ``tramer_boneh`` variant: their MNIST CNN  26,010
``tb_cifar_cnn``       Tramèr–Boneh end-to-end CIFAR-10 CNN (reference controls)        550,570
=====================  ==============================================================  ===========

The ScatterNet features come from :class:`Scattering2D`, a small self-written 2-D scattering
transform (Morlet filter bank, J = 2, L = 8; Bruna & Mallat 2013) that follows the algorithm of kymatio
(Andreux et al. 2020), the implementation Tramèr & Boneh (2021) used: Morlet ψ_{j,θ} with σ = 0.8·2^j,
ξ = 3π/4·2^{−j}, slant 4/L; low-pass φ with σ = 0.8·2^{J−1}; reflect padding by 2^J; first-order modulus at
resolution 2^{j1}, second-order filters cropped to it; subsampling in Fourier; kymatio's channel order.
On CIFAR-10 its coefficients agree with kymatio 0.3.0's to about 3e-7 of each order's maximum
(tests/test_scattering_kymatio.py, run when the optional kymatio is installed; kymatio itself imports
only through :mod:`dpcore.scattering_compat`, since SciPy 1.17 removed ``scipy.special.sph_harm``).
``scatter_cnn`` normalises its input with GroupNorm or, with ``norm="standardize"``, with frozen per-channel
statistics released by Tramèr & Boneh's private data normalisation (:class:`FrozenStandardize`: buffers set once,
never batch statistics; :mod:`dpcore.training.private_norm` releases them and accounts for them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from dpcore.validation import check_choice, check_positive_int

__all__ = [
    "LogisticRegression",
    "LinearRegression",
    "SoftmaxRegression",
    "LeNet5",
    "CNN003",
    "ResNet20",
    "AlexNetCIFAR",
    "Scattering2D",
    "ScatterCNN",
    "ScatterLinear",
    "SampleConvNet",
    "TBCifarCNN",
    "FrozenStandardize",
    "SCATTER_NORMS",
    "MODELS",
    "build_model",
    "count_parameters",
]


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


class LinearRegression(nn.Module):
    """wᵀx + b (use the ``"mse"`` loss)."""

    def __init__(self, in_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(check_positive_int("in_features", in_features), 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear(x.flatten(1))


class LogisticRegression(LinearRegression):
    """σ(wᵀx + b) with the logit as output (use the ``"bce"`` loss); paper 000 eq. (9): the same affine map as
    :class:`LinearRegression` (the loss makes it logistic)."""


class SoftmaxRegression(nn.Module):
    """Multinomial logistic regression: logits Wx + b (use ``"cross_entropy"``)."""

    def __init__(self, in_features: int, num_classes: int) -> None:
        super().__init__()
        self.linear = nn.Linear(
            check_positive_int("in_features", in_features), check_positive_int("num_classes", num_classes)
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.linear(x.flatten(1))


class LeNet5(nn.Module):
    """LeNet-5 (LeCun et al. 1998) for 28×28 inputs, zero-padded to 32×32 by the first convolution.

    ``variant="classic"``: tanh + average pooling (LeCun et al. 1998, as paper 003 App. H uses it);
    ``"relu"``: ReLU + max pooling (paper 000's MNIST experiments).  The 16·5·5 → 120 map is a Linear
    layer (the same function as a 5×5 convolution on the 5×5 map).
    61,706 parameters for one input channel and 10 classes.
    """

    def __init__(self, variant: str = "classic", in_channels: int = 1, num_classes: int = 10, input_size: int = 28):
        super().__init__()
        check_choice("variant", variant, ("classic", "relu"))
        pad = (32 - check_positive_int("input_size", input_size)) // 2
        if input_size + 2 * pad != 32:
            raise ValueError(f"input_size must be an even number <= 32, got {input_size}")
        act: Callable[[], nn.Module] = nn.Tanh if variant == "classic" else nn.ReLU
        pool: Callable[[], nn.Module] = (lambda: nn.AvgPool2d(2)) if variant == "classic" else (lambda: nn.MaxPool2d(2))
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 6, 5, padding=pad), act(), pool(), nn.Conv2d(6, 16, 5), act(), pool()
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), act(), nn.Linear(120, 84), act(), nn.Linear(84, num_classes)
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


class CNN003(nn.Module):
    """The CIFAR-10 CNN of paper 003 (Table 4, App. H), plus the final Linear(128, classes) the table omits.

    Four 3×3 convolutions (32, 64, 64, 128 filters, stride 1, padding 1) with ReLU, 2×2 average pooling
    after the first three, adaptive average pooling, Linear(128, 10); "Softmax" is in the loss.  131,466
    parameters for 3 input channels (the Opacus ``convnet`` example); 130,890 for one channel.
    """

    def __init__(self, in_channels: int = 3, num_classes: int = 10) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        widths = [check_positive_int("in_channels", in_channels), 32, 64, 64, 128]
        for i in range(4):
            layers += [nn.Conv2d(widths[i], widths[i + 1], 3, stride=1, padding=1), nn.ReLU()]
            layers.append(nn.AvgPool2d(2, stride=2) if i < 3 else nn.AdaptiveAvgPool2d((1, 1)))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(128, num_classes))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


class _Shortcut(nn.Module):
    """Option-A shortcut of He et al. 2016: stride-2 subsampling and zero-padded channels (no parameters)."""

    def __init__(self, in_planes: int, planes: int, stride: int) -> None:
        super().__init__()
        self.stride, self.extra = stride, planes - in_planes

    def forward(self, x: Tensor) -> Tensor:
        if self.stride != 1:
            x = x[:, :, :: self.stride, :: self.stride]
        if self.extra:
            half = self.extra // 2
            x = nn.functional.pad(x, (0, 0, 0, 0, half, self.extra - half))
        return x


class _BasicBlock(nn.Module):
    def __init__(self, in_planes: int, planes: int, stride: int, groups: int, affine: bool) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.norm1 = nn.GroupNorm(groups, planes, affine=affine)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.norm2 = nn.GroupNorm(groups, planes, affine=affine)
        self.act = nn.ReLU()
        self.shortcut = _Shortcut(in_planes, planes, stride)

    def forward(self, x: Tensor) -> Tensor:
        out = self.act(self.norm1(self.conv1(x)))
        out = self.norm2(self.conv2(out))
        return self.act(out + self.shortcut(x))


class ResNet20(nn.Module):
    """CIFAR ResNet-20 (He et al. 2016): 3×3 stem (16), three stages of three basic blocks (16/32/64,
    strides 1/2/2), global average pooling, Linear(64, classes).

    Batch norm is replaced by ``GroupNorm(groups, C, affine=affine)`` -- the GEP variant (Yu et al. 2021)
    that paper 002 compares against in Table II (4 groups, no affine parameters).  268,346 parameters for 10 classes.
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 3, groups: int = 4, affine: bool = False) -> None:
        super().__init__()
        self.stem = nn.Conv2d(in_channels, 16, 3, padding=1, bias=False)
        self.norm = nn.GroupNorm(groups, 16, affine=affine)
        self.act = nn.ReLU()
        blocks: list[nn.Module] = []
        in_planes = 16
        for planes, stride in ((16, 1), (32, 2), (64, 2)):
            for b in range(3):
                blocks.append(_BasicBlock(in_planes, planes, stride if b == 0 else 1, groups, affine))
                in_planes = planes
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x: Tensor) -> Tensor:
        out = self.blocks(self.act(self.norm(self.stem(x))))
        return self.fc(self.pool(out).flatten(1))


class AlexNetCIFAR(nn.Module):
    """The 32×32 AlexNet that paper 000 points to (its CIFAR-10 experiments): 23,272,266 parameters for 10 classes."""

    def __init__(self, num_classes: int = 10, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, stride=2, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 192, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(),
            nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(),
            nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )  # fmt: skip
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Dropout(dropout), nn.Linear(256 * 2 * 2, 4096), nn.ReLU(),
            nn.Dropout(dropout), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, num_classes),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


# ------------------------------------------------------------------------------------------------
# 2-D scattering transform (ScatterNet)
# ------------------------------------------------------------------------------------------------
_GABOR_PI = 3.1415  # the normalisation constant of kymatio's ``gabor_2d`` (π truncated; kept so coefficients agree)


def _gabor(m: int, n: int, sigma: float, theta: float, xi: float, slant: float) -> np.ndarray:
    """Periodised 2-D Gabor filter on an m×n grid centred at the origin (Bruna & Mallat 2013; kymatio's formula)."""
    c, s = math.cos(theta), math.sin(theta)
    rot = np.array([[c, -s], [s, c]])
    curv = rot @ np.diag([1.0, slant**2]) @ rot.T / (2 * sigma**2)
    out = np.zeros((m, n), dtype=np.complex128)
    for ex in (-2, -1, 0, 1, 2):
        for ey in (-2, -1, 0, 1, 2):
            xx, yy = np.mgrid[ex * m : m + ex * m, ey * n : n + ey * n]
            arg = -(curv[0, 0] * xx**2 + (curv[0, 1] + curv[1, 0]) * xx * yy + curv[1, 1] * yy**2)
            out += np.exp(arg + 1j * (xx * xi * c + yy * xi * s))
    return out / (2 * _GABOR_PI * sigma**2 / slant)


def _morlet(m: int, n: int, sigma: float, theta: float, xi: float, slant: float) -> np.ndarray:
    """Zero-mean Morlet wavelet: Gabor minus a multiple of its envelope."""
    wave = _gabor(m, n, sigma, theta, xi, slant)
    envelope = _gabor(m, n, sigma, theta, 0.0, slant)
    return wave - (wave.sum() / envelope.sum()) * envelope


def _crop_filter(f_hat: np.ndarray, res: int) -> np.ndarray:
    """A Fourier-domain filter for signals subsampled by 2^res: keep |frequency| < M/2^(res+1), fold onto M/2^res."""
    if res == 0:
        return f_hat.copy()
    m, n = f_hat.shape
    k = 2**res
    kept = f_hat.copy()
    kept[int(m * 2 ** (-res - 1)) : int(m * 2 ** (-res - 1)) + int(m * (1 - 2**-res)), :] = 0
    kept[:, int(n * 2 ** (-res - 1)) : int(n * 2 ** (-res - 1)) + int(n * (1 - 2**-res))] = 0
    return kept.reshape(k, m // k, k, n // k).sum(axis=(0, 2))


def _filter_subsample(u_hat: Tensor, f_hat: Tensor, k: int) -> Tensor:
    """Fourier transform of (u ⋆ f)[::k, ::k] from the transforms of u and f: the mean of the k² frequency blocks.

    Summing block by block avoids the full-size product (the subsampling is the periodisation in Fourier).
    """
    if k == 1:
        return u_hat * f_hat
    mk, nk = u_hat.shape[-2] // k, u_hat.shape[-1] // k
    out = None
    for a in range(k):
        for b in range(k):
            rows, cols = slice(a * mk, (a + 1) * mk), slice(b * nk, (b + 1) * nk)
            term = u_hat[..., rows, cols] * f_hat[..., rows, cols]
            out = term if out is None else out + term
    return out / k**2


class Scattering2D(nn.Module):
    """Second-order 2-D scattering transform S_J x (Bruna & Mallat 2013) with L orientations.

    Input (B, C, H, W) with H, W multiples of 2^J; output (B, C·K, H/2^J, W/2^J) with
    K = 1 + J·L + L²·J(J−1)/2 (81 for J = 2, L = 8), ordered per input channel as kymatio's
    ``Scattering2D`` orders them: [S0, S1(j1, θ1) for (j1, θ1), S2(j1, θ1, j2, θ2) for (j1, θ1) and j2 > j1, θ2].
    The algorithm is the multi-resolution one of kymatio (Andreux et al. 2020), used by Tramèr & Boneh
    (2021) and hence by paper 002's Table I: reflect padding by 2^J, |x ⋆ ψ_{j1}| computed at resolution
    2^{j1}, second-order filters cropped to that resolution, low-pass φ_J and subsampling in Fourier.
    No trainable parameters (filters are buffers).  ``chunk`` images are transformed at a time (8 is fastest
    on one CPU thread: the intermediate tensors stay in cache); the result does not depend on it.
    """

    def __init__(self, shape: tuple[int, int], J: int = 2, L: int = 8, chunk: int = 8) -> None:
        super().__init__()
        self.J, self.L = check_positive_int("J", J), check_positive_int("L", L)
        h, w = shape
        if h % 2**J or w % 2**J or h <= 2**J or w <= 2**J:
            raise ValueError(f"shape must be multiples of 2^J = {2**J} larger than 2^J, got {shape}")
        self.shape, self.pad, self.chunk = (h, w), 2**J, check_positive_int("chunk", chunk)
        m, n = h + 2 * self.pad, w + 2 * self.pad
        psi = []
        for j in range(J):
            for t in range(L):
                theta = (int(L - L / 2 - 1) - t) * math.pi / L
                psi.append(np.real(np.fft.fft2(_morlet(m, n, 0.8 * 2**j, theta, 3.0 / 4.0 * math.pi / 2**j, 4.0 / L))))
        phi = np.real(np.fft.fft2(_gabor(m, n, 0.8 * 2 ** (J - 1), 0.0, 0.0, 1.0)))
        self.register_buffer("psi_hat", torch.tensor(np.stack(psi), dtype=torch.float32))  # (J·L, m, n)
        self.register_buffer("phi_hat", torch.tensor(phi, dtype=torch.float32))
        for res in range(1, J):  # filters at resolution 2^res: φ for S1/S2 of scale res, ψ_{j2 > res} for U2
            self.register_buffer(f"phi_hat_{res}", torch.tensor(_crop_filter(phi, res), dtype=torch.float32))
            if res < J - 1:
                cropped = [_crop_filter(p, res) for p in psi[(res + 1) * L :]]
                self.register_buffer(f"psi_hat_{res}", torch.tensor(np.stack(cropped), dtype=torch.float32))
        order: list[tuple[str, tuple[int, ...]]] = [("s0", ())]
        order += [("s1", (j1 * L + t1,)) for j1 in range(J) for t1 in range(L)]
        order += [
            ("s2", (j1 * L + t1, j2 * L + t2))
            for j1 in range(J)
            for t1 in range(L)
            for j2 in range(j1 + 1, J)
            for t2 in range(L)
        ]
        self.order = order

    @property
    def n_coefficients(self) -> int:
        return len(self.order)

    def _phi(self, res: int) -> Tensor:
        return self.phi_hat if res == 0 else getattr(self, f"phi_hat_{res}")

    def _psi(self, j: int, res: int) -> Tensor:
        """The L wavelets of scale j at resolution 2^res (res ≤ j)."""
        if res == 0:
            return self.psi_hat[j * self.L : (j + 1) * self.L]
        offset = (j - res - 1) * self.L
        return getattr(self, f"psi_hat_{res}")[offset : offset + self.L]

    def _lowpass(self, u_hat: Tensor, res: int) -> Tensor:
        """S = (u ⋆ φ_J) subsampled to resolution 2^J and unpadded, for u given at resolution 2^res."""
        out = torch.fft.ifft2(_filter_subsample(u_hat, self._phi(res), 2 ** (self.J - res))).real
        return out[..., 1:-1, 1:-1]

    def _transform(self, x: Tensor) -> Tensor:
        b, c = x.shape[:2]
        xp = nn.functional.pad(x.reshape(b * c, 1, *x.shape[2:]), (self.pad,) * 4, mode="reflect")[:, 0]
        x_hat = torch.fft.fft2(xp.to(self.psi_hat.dtype))  # (bc, m, n)
        parts = [self._lowpass(x_hat, 0)[:, None]]
        s2 = []
        for j1 in range(self.J):
            u1 = torch.fft.ifft2(_filter_subsample(x_hat[:, None], self._psi(j1, 0), 2**j1)).abs()  # (bc, L, ·, ·)
            u1_hat = torch.fft.fft2(u1)
            parts.append(self._lowpass(u1_hat, j1))
            per_j2 = []
            for j2 in range(j1 + 1, self.J):
                u2_hat = _filter_subsample(u1_hat[:, :, None], self._psi(j2, j1), 2 ** (j2 - j1))
                u2_hat = torch.fft.fft2(torch.fft.ifft2(u2_hat).abs())  # (bc, L, L, ..)
                per_j2.append(self._lowpass(u2_hat, j2))
            if per_j2:  # order (θ1, j2, θ2) within j1
                s2.append(torch.stack(per_j2, dim=2).flatten(1, 3))
        feats = torch.cat(parts + s2, dim=1)  # (bc, K, h', w')
        return feats.reshape(b, c * feats.shape[1], *feats.shape[2:])

    def forward(self, x: Tensor) -> Tensor:
        if tuple(x.shape[-2:]) != self.shape:
            raise ValueError(f"expected input of spatial shape {self.shape}, got {tuple(x.shape[-2:])}")
        with torch.no_grad():
            return torch.cat([self._transform(x[i : i + self.chunk]) for i in range(0, x.shape[0], self.chunk)])


class FrozenStandardize(nn.Module):
    """Per-channel (x − mean)/√(var + 1e-5) with released statistics, and 0 on channels whose variance is 0 --
    Tramèr & Boneh's frozen batch normalisation of ScatterNet features (their ``standardize``).  The statistics
    are buffers (no parameters: per-sample gradients are unaffected) set once by :meth:`set_statistics`, e.g. from
    :func:`dpcore.training.private_norm.private_channel_statistics`; before that, ``forward`` refuses to run."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.channels = check_positive_int("channels", channels)
        self.register_buffer("mean", torch.zeros(self.channels))
        self.register_buffer("var", torch.ones(self.channels))
        self.register_buffer("fitted", torch.zeros((), dtype=torch.bool))

    def set_statistics(self, mean: Tensor, var: Tensor) -> None:
        """Copy the released per-channel mean and variance (shape (channels,), finite, var >= 0)."""
        for name, t in (("mean", mean), ("var", var)):
            if not isinstance(t, Tensor) or tuple(t.shape) != (self.channels,) or not torch.isfinite(t).all():
                raise ValueError(f"{name} must be a finite tensor of shape ({self.channels},), got {t!r}")
        if (var < 0).any():
            raise ValueError("var must be >= 0 in every channel")
        with torch.no_grad():
            self.mean.copy_(mean)
            self.var.copy_(var)
            self.fitted.fill_(True)

    def forward(self, x: Tensor) -> Tensor:
        if not bool(self.fitted):
            raise ValueError("FrozenStandardize has no statistics: call set_statistics(mean, var) first")
        view = (1, -1) + (1,) * (x.ndim - 2)
        var = self.var.view(view)
        return (x - self.mean.view(view)) / torch.sqrt(var + 1e-5) * (var != 0).to(x.dtype)


#: ScatterCNN input normalisations: GroupNorm (no privacy cost) or frozen released statistics
SCATTER_NORMS = ("groupnorm", "standardize")


class ScatterCNN(nn.Module):
    """Tramèr & Boneh (2021) CNN on ScatterNet features (paper 002, Table I): an input normalisation, then

    * ``dataset="cifar10"``: Conv3×3(243→64)+Tanh, MaxPool2, Conv3×3(64→64)+Tanh, Linear(1024→10): 187,210 parameters;
    * ``dataset="fmnist"``: Conv3×3 s2 (81→16)+Tanh, Conv3×3(16→32)+Tanh, Linear(512→32)+Tanh, Linear(32→10): 33,066.

    ``norm="groupnorm"`` (default): GroupNorm(groups, affine=False) on the features.  ``norm="standardize"``:
    :class:`FrozenStandardize` -- Tramèr & Boneh's private data normalisation ("BN"); its statistics must be
    released privately and set with :meth:`set_input_statistics` before the model runs.
    With ``scattering=True`` the module starts with :class:`Scattering2D` (raw images in); otherwise it
    takes precomputed features (faster: compute the scattering once for the whole data set).
    """

    def __init__(self, dataset: str = "cifar10", *, scattering: bool = False, groups: int = 27, num_classes: int = 10,
                 norm: str = "groupnorm"):  # fmt: skip
        super().__init__()
        check_choice("dataset", dataset, ("cifar10", "fmnist", "mnist"))  # "mnist": the same net as "fmnist"
        check_choice("norm", norm, SCATTER_NORMS)
        channels, shape = (243, (32, 32)) if dataset == "cifar10" else (81, (28, 28))
        self.scattering = Scattering2D(shape) if scattering else None
        self.norm: nn.Module = (
            nn.GroupNorm(groups, channels, affine=False) if norm == "groupnorm" else FrozenStandardize(channels)
        )
        if dataset == "cifar10":
            self.body = nn.Sequential(
                nn.Conv2d(channels, 64, 3, padding=1), nn.Tanh(), nn.MaxPool2d(2),
                nn.Conv2d(64, 64, 3, padding=1), nn.Tanh(), nn.Flatten(), nn.Linear(64 * 4 * 4, num_classes),
            )  # fmt: skip
        else:
            self.body = nn.Sequential(
                nn.Conv2d(channels, 16, 3, stride=2, padding=1), nn.Tanh(),
                nn.Conv2d(16, 32, 3, padding=1), nn.Tanh(), nn.Flatten(),
                nn.Linear(32 * 4 * 4, 32), nn.Tanh(), nn.Linear(32, num_classes),
            )  # fmt: skip

    def set_input_statistics(self, mean: Tensor, var: Tensor) -> None:
        """Set the released per-channel statistics of a ``norm="standardize"`` model (ValueError otherwise)."""
        if not isinstance(self.norm, FrozenStandardize):
            raise ValueError("set_input_statistics needs norm='standardize'; this model uses GroupNorm")
        self.norm.set_statistics(mean, var)

    def forward(self, x: Tensor) -> Tensor:
        if self.scattering is not None:
            x = self.scattering(x)
        return self.body(self.norm(x))


def _scatter_norm(norm: str, groups: int, channels: int) -> nn.Module:
    check_choice("norm", norm, SCATTER_NORMS)
    return nn.GroupNorm(groups, channels, affine=False) if norm == "groupnorm" else FrozenStandardize(channels)


class ScatterLinear(nn.Module):
    """Tramèr & Boneh's linear model on ScatterNet features (ftramer/Handcrafted-DP@6568e8f, models.py L166-197,
    ``ScatterLinear``): an input normalisation of the (K, h, w) features (GroupNorm(groups, affine=False) or the
    frozen private statistics, :class:`FrozenStandardize`), then Linear(K·h·w → classes).  ``dataset`` picks (K, h, w):
    CIFAR-10 (243, 8, 8), MNIST / Fashion-MNIST (81, 7, 7).  155,530 / 39,700 parameters."""

    def __init__(self, dataset: str = "cifar10", *, groups: int = 27, num_classes: int = 10,
                 norm: str = "groupnorm") -> None:  # fmt: skip
        super().__init__()
        check_choice("dataset", dataset, ("cifar10", "fmnist", "mnist"))
        self.channels, side = (243, 8) if dataset == "cifar10" else (81, 7)
        self.norm = _scatter_norm(norm, groups, self.channels)
        self.fc = nn.Linear(self.channels * side * side, check_positive_int("num_classes", num_classes))

    def set_input_statistics(self, mean: Tensor, var: Tensor) -> None:
        """Set the released per-channel statistics of a ``norm="standardize"`` model (ValueError otherwise)."""
        if not isinstance(self.norm, FrozenStandardize):
            raise ValueError("set_input_statistics needs norm='standardize'; this model uses GroupNorm")
        self.norm.set_statistics(mean, var)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(self.norm(x).flatten(1))


class SampleConvNet(nn.Module):
    """The small MNIST CNN of Opacus's example and of Tramèr & Boneh (26,010 parameters for 28×28 inputs).

    ``variant="opacus"``: pytorch/opacus@4d0ebc8 examples/mnist.py L38-55 -- Conv(1→16, 8, stride 2, padding 3)+ReLU,
    MaxPool(2, stride 1), Conv(16→32, 4, stride 2)+ReLU, MaxPool(2, stride 1), Linear(512→32)+ReLU, Linear(32→10).
    ``variant="tramer_boneh"``: ftramer/Handcrafted-DP@6568e8f models.py L111-163 (``MNIST_CNN`` on images): the same
    layers with padding 2 and Tanh.
    """

    def __init__(self, variant: str = "opacus", num_classes: int = 10) -> None:
        super().__init__()
        check_choice("variant", variant, ("opacus", "tramer_boneh"))
        act: Callable[[], nn.Module] = nn.ReLU if variant == "opacus" else nn.Tanh
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 8, stride=2, padding=3 if variant == "opacus" else 2), act(), nn.MaxPool2d(2, 1),
            nn.Conv2d(16, 32, 4, stride=2), act(), nn.MaxPool2d(2, 1),
        )  # fmt: skip
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 32), act(), nn.Linear(32, num_classes))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


class TBCifarCNN(nn.Module):
    """Tramèr & Boneh's end-to-end CIFAR-10 CNN (ftramer/Handcrafted-DP@6568e8f models.py L49-108, ``CIFAR10_CNN``
    with 3 input channels): Conv3×3 32, 32, MaxPool, 64, 64, MaxPool, 128, 128, MaxPool (Tanh after every
    convolution), Linear(2048→128)+Tanh, Linear(128→10).  550,570 parameters."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        c = 3
        for v in (32, 32, "M", 64, 64, "M", 128, 128, "M"):
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(c, int(v), 3, padding=1), nn.Tanh()]
                c = int(v)
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(c * 4 * 4, 128), nn.Tanh(), nn.Linear(128, num_classes))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


MODELS: dict[str, Callable[..., nn.Module]] = {
    "logistic": LogisticRegression,
    "linear": LinearRegression,
    "softmax": SoftmaxRegression,
    "lenet5": LeNet5,
    "cnn003": CNN003,
    "resnet20": ResNet20,
    "alexnet_cifar": AlexNetCIFAR,
    "scatter_cnn": ScatterCNN,
    "scatter_linear": ScatterLinear,
    "sample_convnet": SampleConvNet,
    "tb_cifar_cnn": TBCifarCNN,
}


def build_model(name: str, *, seed: int | None = None, **kwargs: Any) -> nn.Module:
    """Instantiate ``MODELS[name](**kwargs)``; ``seed`` makes the initialisation reproducible."""
    check_choice("name", name, tuple(MODELS))
    if seed is None:
        return MODELS[name](**kwargs)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MODELS[name](**kwargs)
