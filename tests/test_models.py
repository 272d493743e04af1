"""Models of papers 000/002/003: sizes from the notes, shapes, the scattering transform, per-sample support."""

import math

import pytest
import torch
from torch import nn

from dpcore.models import MODELS, ScatterCNN, Scattering2D, build_model, count_parameters
from dpcore.training import clipped_group_sum, layer_engine_supported


@pytest.mark.parametrize(
    "name,kwargs,shape,params",
    [
        ("logistic", {"in_features": 22}, (2, 22), 23),
        ("linear", {"in_features": 8}, (2, 8), 9),
        ("softmax", {"in_features": 784, "num_classes": 10}, (2, 1, 28, 28), 7850),
        ("lenet5", {}, (2, 1, 28, 28), 61_706),  # LeNet-5 (paper 003 App. H)
        ("lenet5", {"variant": "relu"}, (2, 1, 28, 28), 61_706),
        ("cnn003", {}, (2, 3, 32, 32), 131_466),  # paper 003 Table 4, with a final Linear(128, 10)
        ("cnn003", {"in_channels": 1}, (2, 1, 28, 28), 130_890),
        ("resnet20", {}, (2, 3, 32, 32), 268_346),
        ("alexnet_cifar", {}, (2, 3, 32, 32), 23_272_266),  # paper 000's CIFAR-10 AlexNet
        ("scatter_cnn", {}, (2, 243, 8, 8), 187_210),  # paper 002 Table I (Tramèr & Boneh 2021)
        ("scatter_cnn", {"dataset": "fmnist"}, (2, 81, 7, 7), 33_066),
    ],
)
def test_parameter_counts_and_output_shapes(name, kwargs, shape, params):
    model = build_model(name, seed=0, **kwargs)
    assert count_parameters(model) == params
    out = model(torch.randn(shape))
    assert out.shape[0] == 2 and out.shape[1] in (1, 10)
    assert not any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())
    assert layer_engine_supported(model)[0]


def test_build_model_is_seeded_and_validated():
    a, b = build_model("lenet5", seed=3), build_model("lenet5", seed=3)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    with pytest.raises(ValueError, match="name"):
        build_model("vgg16")
    assert set(MODELS) >= {"lenet5", "cnn003", "resnet20", "alexnet_cifar", "scatter_cnn"}


def test_lenet_variants_differ():
    classic, relu = build_model("lenet5", seed=0), build_model("lenet5", seed=0, variant="relu")
    x = torch.randn(3, 1, 28, 28)
    assert not torch.allclose(classic(x), relu(x))
    with pytest.raises(ValueError, match="input_size"):
        build_model("lenet5", input_size=29)


def test_resnet20_layer_engine_matches_vmap():
    """Stride-2 and bias-free convolutions of a real model through the layer engine."""
    model = build_model("resnet20", seed=0).double()
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(3, 3, 32, 32, generator=g, dtype=torch.float64), torch.randint(0, 10, (3,), generator=g)

    def ce(o, t):
        return nn.functional.cross_entropy(o, t, reduction="none")

    a = clipped_group_sum(model, ce, x, y, group_size=1, clip_norm=0.1, engine="layer")
    b = clipped_group_sum(model, ce, x, y, group_size=1, clip_norm=0.1, engine="vmap")
    torch.testing.assert_close(a.norms, b.norms, rtol=1e-9, atol=1e-12)
    for u, v in zip(a.clipped_sum, b.clipped_sum, strict=True):
        torch.testing.assert_close(u, v, rtol=1e-9, atol=1e-12)


def test_scattering_layout_and_invariances():
    scat = Scattering2D((16, 16), J=2, L=8)
    assert scat.n_coefficients == 81 and count_parameters(scat) == 0
    g = torch.Generator().manual_seed(0)
    x = torch.rand(2, 3, 16, 16, generator=g)
    s = scat(x)
    assert s.shape == (2, 3 * 81, 4, 4)
    # the wavelets have zero mean, the low-pass filter mean π/3.1415 (kymatio's Gabor normalisation, kept)
    assert float(scat.psi_hat[:, 0, 0].abs().max()) < 1e-6
    assert float(scat.phi_hat[0, 0]) == pytest.approx(math.pi / 3.1415, abs=1e-6)
    # a constant image has only the order-0 coefficient
    const = scat(torch.full((1, 1, 16, 16), 2.0))
    assert torch.allclose(const[0, 0], torch.full((4, 4), 2.0), atol=1e-4)
    assert float(const[0, 1:].abs().max()) < 1e-4
    # positively homogeneous (modulus and linear filters)
    torch.testing.assert_close(scat(3 * x), 3 * s, rtol=1e-4, atol=1e-5)
    # stable to a one-pixel translation, unlike a change of image
    img = torch.zeros(1, 1, 16, 16)
    img[0, 0, 5:11, 6:9] = 1.0
    shifted = torch.roll(img, 1, dims=3)
    other = torch.rand(1, 1, 16, 16, generator=g)
    base = scat(img)
    d_shift = float((scat(shifted) - base).norm() / base.norm())
    d_other = float((scat(other) - base).norm() / base.norm())
    assert d_shift < 0.35 < d_other
    with pytest.raises(ValueError, match="multiples"):
        Scattering2D((15, 16))


def test_scatter_cnn_with_scattering_front_end():
    model = ScatterCNN("fmnist", scattering=True)
    assert count_parameters(model) == 33_066
    out = model(torch.rand(2, 1, 28, 28))
    assert out.shape == (2, 10)
