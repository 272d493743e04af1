"""ISRL-DP federated algorithms (paper 001): exactness on deterministic federations, noise, silo boundary."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from dpcore.federated import algorithms as alg
from dpcore.federated.models import LogisticLoss, SoftmaxLoss, SquaredLoss
from dpcore.federated.silos import SiloPool
from dpcore.papers.p001_isrl import accounting as isrl


def _constant_silos(n=4, trials=1, seed=0, num_silos=3, dim=3, loss="squared"):
    """Each silo holds n copies of one record: every minibatch gradient is deterministic."""
    rng = np.random.default_rng(seed)
    rec = rng.normal(size=(trials, num_silos, 1, dim))
    x = np.repeat(rec, n, axis=2)
    if loss == "softmax":
        y = np.repeat(rng.integers(0, 3, size=(trials, num_silos, 1)), n, axis=2)
    else:
        y = np.repeat(rng.normal(size=(trials, num_silos, 1)), n, axis=2)
    return x, y


def _grad_squared(w, x, y):
    return (w @ x - y) * x


def test_mb_sgd_equals_gradient_descent_on_a_deterministic_federation():
    x, y = _constant_silos()
    pool = SiloPool(x, y, np.full((1, 3), 4), SquaredLoss(), dtype=torch.float64)
    out = alg.mb_sgd(pool, rounds=7, silos_per_round=3, stepsize=[0.1, 0.3], batch_size=3, trial_of_stream=[0],
                     output="last")
    for c, eta in enumerate((0.1, 0.3)):
        w = np.zeros(3)
        for _ in range(7):
            w = w - eta * np.mean([_grad_squared(w, x[0, i, 0], y[0, i, 0]) for i in range(3)], axis=0)
        np.testing.assert_allclose(out[0, c, 0].numpy(), w, rtol=1e-12)


def test_output_averaging_modes():
    x, y = _constant_silos()
    pool = SiloPool(x, y, np.full((1, 3), 4), SquaredLoss(), dtype=torch.float64)
    iterates = [np.zeros(3)]
    for _ in range(10):
        w = iterates[-1]
        iterates.append(w - 0.2 * np.mean([_grad_squared(w, x[0, i, 0], y[0, i, 0]) for i in range(3)], axis=0))
    kw = dict(rounds=10, silos_per_round=3, stepsize=[0.2], batch_size=2, trial_of_stream=[0])
    window = alg.mb_sgd(pool, output="window", window=4, **kw)[0, 0, 0].numpy()
    uniform = alg.mb_sgd(pool, output="uniform", **kw)[0, 0, 0].numpy()
    np.testing.assert_allclose(window, np.mean(iterates[7:11], axis=0), rtol=1e-12)
    np.testing.assert_allclose(uniform, np.mean(iterates[0:10], axis=0), rtol=1e-12)


def test_local_sgd_equals_sequential_local_steps():
    x, y = _constant_silos()
    pool = SiloPool(x, y, np.full((1, 3), 4), SquaredLoss(), dtype=torch.float64)
    out = alg.local_sgd(pool, rounds=3, silos_per_round=3, stepsize=[0.05], local_steps=5, trial_of_stream=[0],
                        output="last")
    w = np.zeros(3)
    for _ in range(3):
        finals = []
        for i in range(3):
            v = w.copy()
            for _ in range(5):
                v = v - 0.05 * _grad_squared(v, x[0, i, 0], y[0, i, 0])
            finals.append(v)
        w = np.mean(finals, axis=0)
    np.testing.assert_allclose(out[0, 0, 0].numpy(), w, rtol=1e-12)


def test_softmax_gradient_matches_autograd():
    x, y = _constant_silos(loss="softmax")
    pool = SiloPool(x, y, np.full((1, 3), 4), SoftmaxLoss(3), dtype=torch.float64)
    out = alg.mb_sgd(pool, rounds=1, silos_per_round=3, stepsize=[1.0], batch_size=2, trial_of_stream=[0],
                     output="last", init=np.full((3, 3), 0.1))
    w = torch.full((3, 3), 0.1, dtype=torch.float64, requires_grad=True)
    xt, yt = torch.as_tensor(x[0, :, 0]), torch.as_tensor(y[0, :, 0])
    torch.nn.functional.cross_entropy(xt @ w.T, yt).backward()
    np.testing.assert_allclose(out[0, 0].numpy(), (w - w.grad).detach().numpy(), rtol=1e-10)


def test_accelerated_matches_the_ac_sa_recursion():
    x, y = _constant_silos(n=12)
    pool = SiloPool(x, y, np.full((1, 3), 12), SquaredLoss(), dtype=torch.float64)
    for mu in (0.0, 0.5):
        out = alg.accelerated_mb_sgd(pool, silos_per_round=3, stepsize=[0.05], batch_size=3, trial_of_stream=[0],
                                     mu=mu)
        w_prev, w_ag, gamma = np.zeros(3), np.zeros(3), 0.05
        for r in range(1, 5):  # one pass: 12 // 3 = 4 rounds
            a = 2 / (r + 1)
            eta = 2 / (gamma * r * (r + 1))
            den = eta + (1 - a**2) * mu
            w_md = (1 - a) * (mu + eta) / den * w_ag + a * ((1 - a) * mu + eta) / den * w_prev
            g = np.mean([_grad_squared(w_md, x[0, i, 0], y[0, i, 0]) for i in range(3)], axis=0)
            w_new = (a * mu * w_md + ((1 - a) * mu + eta) * w_prev - a * g) / (mu + eta)
            w_ag = a * w_new + (1 - a) * w_ag
            w_prev = w_new
        np.testing.assert_allclose(out[0, 0, 0].numpy(), w_ag, rtol=1e-10)


def test_one_pass_batches_are_disjoint():
    # record j of the single silo is the unit vector e_j with label 0 and W = −1·e: gradients reveal the batch
    n, k = 12, 3
    x = np.eye(n)[None, None]
    y = np.zeros((1, 1, n))
    pool = SiloPool(x, y, [[n]], SquaredLoss(), dtype=torch.float64)
    ranks = pool.one_pass_orders(torch.tensor([0]))
    used = torch.zeros(n)
    w = torch.full((1, 1, 1, n), -1.0, dtype=torch.float64)
    for b in range(n // k):
        msg = pool.one_pass_messages(w, trial_of_stream=torch.tensor([0]), participants=torch.tensor([[0]]),
                                     batch_size=torch.tensor([[k]]), noise_std=torch.zeros(1, 1, 1),
                                     usage=torch.tensor([[b]]), ranks=ranks)
        used += (msg[0, 0, 0, 0] != 0).double()
    assert torch.equal(used, torch.ones(n))


@pytest.mark.parametrize("algorithm", ["mb-sgd", "local-sgd"])
def test_infinite_epsilon_recovers_the_non_private_algorithm_exactly(algorithm):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 4, 20, 5))
    y = (rng.random((2, 4, 20)) < 0.5).astype(float)
    pool = SiloPool(x, y, np.full((2, 4), 20), LogisticLoss())
    kw = dict(lipschitz=2.0, rounds=6, n=20, delta=1 / 400, batch_size=5)
    calib = isrl.noise_std if algorithm == "mb-sgd" else isrl.local_sgd_noise_std
    sigmas = [calib(epsilon=e, **kw) for e in (1.0, math.inf)]  # one private, one ε = ∞ configuration
    assert sigmas[1] == 0.0
    run = alg.mb_sgd if algorithm == "mb-sgd" else alg.local_sgd
    size = {"batch_size": 5} if algorithm == "mb-sgd" else {"local_steps": 5}
    common = dict(rounds=6, silos_per_round=2, trial_of_stream=[0, 1, 1], seed=11, **size)
    mixed = run(pool, stepsize=[0.3, 0.3], noise_std=sigmas, **common)
    quiet = run(pool, stepsize=[0.3, 0.3], noise_std=[0.0, 0.0], **common)
    plain = run(pool, stepsize=[0.3], noise_std=0.0, **common)
    assert torch.equal(mixed[:, 1], quiet[:, 1])  # bitwise: the noise never touches the ε = ∞ run
    # the same run alone (one configuration: other matrix shapes, so equal up to float32 rounding)
    torch.testing.assert_close(mixed[:, 1], plain[:, 0], rtol=1e-5, atol=1e-6)
    assert not torch.equal(mixed[:, 0], plain[:, 0])


def test_runs_are_reproducible_and_seeded():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(1, 3, 10, 4)), rng.normal(size=(1, 3, 10))
    pool = SiloPool(x, y, [[10, 10, 10]], SquaredLoss())
    kw = dict(rounds=5, silos_per_round=2, stepsize=[0.1], batch_size=3, trial_of_stream=[0, 0], noise_std=0.5)
    a, b = alg.mb_sgd(pool, seed=1, **kw), alg.mb_sgd(pool, seed=1, **kw)
    c = alg.mb_sgd(pool, seed=2, **kw)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert not torch.equal(a[0], a[1])  # streams are independent


def test_silo_noise_has_the_calibrated_standard_deviation():
    # one record per silo: the clean gradient is known, the message minus it is the silo's noise
    s, sigma = 4000, 0.7
    x, y = np.ones((1, 2, 1, 3)), np.zeros((1, 2, 1))
    pool = SiloPool(x, y, [[1, 1]], SquaredLoss(), dtype=torch.float64)
    w = torch.full((s, 1, 1, 3), 2.0, dtype=torch.float64)  # gradient (2·3 − 0)·1 = 6 per coordinate
    msg = pool.mb_sgd_messages(w, trial_of_stream=torch.zeros(s, dtype=torch.long),
                               participants=torch.tensor([[0, 1]]).expand(s, 2), batch_size=torch.tensor([[1, 1]]),
                               noise_std=torch.tensor([[[sigma, 2 * sigma]]]))
    noise = msg - 6.0
    assert noise[:, 0].std().item() == pytest.approx(sigma, rel=0.03)
    assert noise[:, 1].std().item() == pytest.approx(2 * sigma, rel=0.03)
    assert abs(noise.mean().item()) < 0.05


def test_minibatches_are_drawn_with_replacement():
    # record j is e_j with label −1 at w = 0: ψ = z − y = 1, the gradient is e_j and a message is counts/K
    n, k, s = 5, 4, 20000
    x, y = np.eye(n)[None, None], -np.ones((1, 1, n))
    pool = SiloPool(x, y, [[n]], SquaredLoss(), dtype=torch.float64)
    msg = pool.mb_sgd_messages(torch.zeros(s, 1, 1, n, dtype=torch.float64),
                               trial_of_stream=torch.zeros(s, dtype=torch.long),
                               participants=torch.zeros(s, 1, dtype=torch.long), batch_size=torch.tensor([[k]]),
                               noise_std=torch.zeros(1, 1, 1))
    counts = (msg[:, 0, 0, 0] * k).numpy()
    assert counts.sum(axis=1) == pytest.approx(np.full(s, k))
    assert counts.mean(axis=0) == pytest.approx(np.full(n, k / n), abs=0.03)
    # multinomial variance K(1/n)(1 − 1/n), larger than without replacement (factor (n − K)/(n − 1))
    assert counts.var(axis=0) == pytest.approx(np.full(n, k / n * (1 - 1 / n)), rel=0.05)


def test_per_example_clipping():
    x, y = np.array([[[[3.0, 4.0]]]]), np.array([[[0.0]]])  # ‖x‖ = 5
    pool = SiloPool(x, y, [[1]], SquaredLoss(), dtype=torch.float64)
    w = torch.tensor([[[[1.0, 0.0]], [[1.0, 0.0]]]], dtype=torch.float64)  # z = 3: gradient 3·x, norm 15
    msg = pool.mb_sgd_messages(w, trial_of_stream=torch.tensor([0]), participants=torch.tensor([[0]]),
                               batch_size=torch.tensor([[1]]), noise_std=torch.zeros(1, 2, 1),
                               clip=torch.tensor([1.0, 100.0], dtype=torch.float64))
    assert msg[0, 0, 0].norm().item() == pytest.approx(1.0)
    assert msg[0, 0, 1].norm().item() == pytest.approx(15.0)


def test_participants_are_uniform_subsets():
    gen = torch.Generator().manual_seed(0)
    chosen = alg.participants(gen, 20000, 5, 2)
    assert all(len(set(row.tolist())) == 2 for row in chosen[:100])
    freq = torch.bincount(chosen.reshape(-1), minlength=5).double() / 20000
    assert freq.numpy() == pytest.approx(np.full(5, 2 / 5), abs=0.015)


def test_shuffled_mb_sgd_learns_the_same_model():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(1, 6, 10, 3)), rng.normal(size=(1, 6, 10))
    pool = SiloPool(x, y, np.full((1, 6), 10), SquaredLoss(), dtype=torch.float64)
    kw = dict(rounds=5, silos_per_round=4, stepsize=[0.1], batch_size=3, trial_of_stream=[0, 0], noise_std=0.2, seed=3)
    torch.testing.assert_close(alg.shuffled_mb_sgd(pool, **kw), alg.mb_sgd(pool, **kw), rtol=1e-12, atol=1e-12)
    shuffle = alg.Shuffler(0)
    messages = torch.arange(24.0).view(2, 4, 3)
    out = shuffle(messages)
    assert sorted(out[0, :, 0].tolist()) == [0.0, 3.0, 6.0, 9.0]
    assert torch.equal(out[..., 1] - out[..., 0], torch.ones(2, 4))  # whole messages move together


# ----------------------------------------------------------------------------- the silo boundary


class _ServerView:
    """What a server may see of the silos: public metadata and the message methods -- nothing else."""

    ALLOWED = {"num_silos", "num_trials", "dim", "num_outputs", "sizes", "dtype", "reset_randomness",
               "mb_sgd_messages", "local_sgd_messages", "one_pass_messages", "one_pass_orders"}

    def __init__(self, pool):
        object.__setattr__(self, "_pool", pool)
        object.__setattr__(self, "received", [])

    def __getattr__(self, name):
        if name not in self.ALLOWED:
            raise AssertionError(f"the server touched silo attribute {name!r}")
        value = getattr(object.__getattribute__(self, "_pool"), name)
        if name.endswith("_messages"):
            def record(*args, **kwargs):
                out = value(*args, **kwargs)
                self.received.append(out.clone())
                return out
            return record
        return value


@pytest.mark.parametrize("name", ["mb_sgd", "local_sgd", "accelerated_mb_sgd", "shuffled_mb_sgd"])
def test_server_only_sees_noised_messages(name):
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(1, 4, 12, 3)), rng.normal(size=(1, 4, 12))
    pool = SiloPool(x, y, np.full((1, 4), 12), SquaredLoss(), dtype=torch.float64)
    view = _ServerView(pool)
    size = {"local_steps": 3} if name == "local_sgd" else {"batch_size": 3}
    kw = dict(silos_per_round=2, stepsize=[0.1], trial_of_stream=[0, 0], noise_std=0.3, seed=4, **size)
    if name != "accelerated_mb_sgd":
        kw["rounds"] = 3
    through_view = getattr(alg, name)(view, **kw)
    direct = getattr(alg, name)(pool, **kw)
    assert torch.equal(through_view, direct)
    assert view.received  # every message came from the silos' methods...
    clean = getattr(alg, name)(pool, **{**kw, "noise_std": 0.0})
    assert not torch.allclose(clean, direct)  # ...and carried noise


def test_server_code_never_reads_silo_data():
    source = Path(alg.__file__).read_text()
    for private in ("._x", "._y", "._xnorm", "_minibatch_gradients", "._loss"):
        assert private not in source
    assert not hasattr(SiloPool(np.zeros((1, 1, 1, 1)), np.zeros((1, 1, 1)), [[1]], SquaredLoss()), "__dict__")


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(silos_per_round=5), "silos_per_round"),
        (dict(batch_size=11), "batch_size"),
        (dict(noise_std=-1.0), "noise_std"),
        (dict(stepsize=[0.0]), "stepsize"),
        (dict(output="best"), "output"),
        (dict(rounds=0), "rounds"),
        (dict(trial_of_stream=[3]), "trial_of_stream"),
        (dict(clip=0.0), "clip"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    pool = SiloPool(np.zeros((1, 4, 10, 2)), np.zeros((1, 4, 10)), np.full((1, 4), 10), SquaredLoss())
    base = dict(rounds=2, silos_per_round=2, stepsize=[0.1], batch_size=3, trial_of_stream=[0])
    with pytest.raises(ValueError, match=name):
        alg.mb_sgd(pool, **{**base, **kwargs})


def test_pool_validates_shapes():
    with pytest.raises(ValueError, match="features"):
        SiloPool(np.zeros((4, 10, 2)), np.zeros((4, 10)), [4], SquaredLoss())
    with pytest.raises(ValueError, match="sizes"):
        SiloPool(np.zeros((1, 2, 3, 2)), np.zeros((1, 2, 3)), [[4, 3]], SquaredLoss())


# --------------------------------------------------------------------------- run records
def test_algorithms_return_one_run_record_per_configuration_and_silo():
    from dpcore.accounting.gaussian import epsilon_from_mu
    from dpcore.accounting.records import epsilon_for_record
    from dpcore.accounting.run_record import RunRecord

    x, y = _constant_silos(n=40)
    pool = SiloPool(x, y, np.full((1, 3), 40), SquaredLoss(), dtype=torch.float64)
    common = dict(silos_per_round=3, stepsize=[0.1, 0.2], trial_of_stream=[0], noise_std=[0.5, 1.0])
    w, recs = alg.mb_sgd(pool, rounds=5, batch_size=4, lipschitz=2.0, return_records=True, data="toy", **common)
    assert w.shape[1] == 2 and set(recs) == {(c, i) for c in range(2) for i in range(3)}
    rec = recs[(1, 0)]
    assert isinstance(rec, RunRecord) and rec.sampling == "replacement" and rec.data == "toy"
    assert (rec.dataset_size, rec.batch_size, rec.steps, rec.clip_norm) == (40, 4, 5, 2.0)
    assert rec.noise_std == pytest.approx(4 * 1.0)  # K·σ on the sum
    # the library's with-replacement PLD (replace-one) is the registry's accountant for these records
    tight = isrl.mbsgd_epsilon(noise_std=1.0, lipschitz=2.0, batch_size=4, n=40, rounds=5, delta=1e-5)
    assert epsilon_for_record(rec, 1e-5) == pytest.approx(tight, rel=1e-12)
    # Local SGD: K single-record uniform draws per round, accounted as fixed-size batches of 1
    _, local = alg.local_sgd(pool, rounds=3, local_steps=2, clip=1.0, return_records=True, **common)
    assert (local[(0, 2)].sampling, local[(0, 2)].batch_size, local[(0, 2)].steps) == ("fixed", 1, 6)
    assert math.isfinite(epsilon_for_record(local[(0, 2)], 1e-5))
    # one pass: one shuffled epoch, a Gaussian of sensitivity 2L/K on the mean: G_{2L/(Kσ)}
    _, one = alg.accelerated_mb_sgd(pool, batch_size=8, lipschitz=2.0, return_records=True, **common)
    assert one[(1, 1)].sampling == "shuffle" and one[(1, 1)].steps == 5
    assert epsilon_for_record(one[(1, 1)], 1e-5) == pytest.approx(epsilon_from_mu(2 * 2.0 / (8 * 1.0), 1e-5))
    with pytest.raises(ValueError, match="lipschitz"):
        alg.mb_sgd(pool, rounds=2, batch_size=4, return_records=True, **common)


def test_batch_mean_clipping_clips_the_minibatch_mean_once():
    # two records with gradients 3·x1 (norm 15) and 0, drawn c and 2 − c times: the raw mean has norm 7.5·c,
    # per-example clipping to 1 gives c/2, clipping the mean gives min(1, 7.5·c); a large threshold changes nothing
    x = np.array([[[[3.0, 4.0], [0.0, 0.0]]]])
    y = np.array([[[0.0, 0.0]]])
    pool = SiloPool(x, y, [[2]], SquaredLoss(), dtype=torch.float64)
    w = torch.tensor([[[[1.0, 0.0]], [[1.0, 0.0]]]], dtype=torch.float64)
    clip = torch.tensor([1.0, 100.0], dtype=torch.float64)
    kw = dict(trial_of_stream=torch.tensor([0]), participants=torch.tensor([[0]]), batch_size=torch.tensor([[2]]),
              noise_std=torch.zeros(1, 2, 1), clip=clip)
    for seed in range(5):
        pool.reset_randomness(seed)
        raw = pool.mb_sgd_messages(w, **{**kw, "clip": None})[0, 0, 0].norm().item()
        pool.reset_randomness(seed)
        mean = pool.mb_sgd_messages(w, clip_scope="batch_mean", **kw)
        assert mean[0, 0, 0].norm().item() == pytest.approx(min(1.0, raw))
        assert mean[0, 0, 1].norm().item() == pytest.approx(raw)
        pool.reset_randomness(seed)
        each = pool.mb_sgd_messages(w, **kw)
        assert each[0, 0, 0].norm().item() == pytest.approx(raw / 15.0)
    with pytest.raises(ValueError, match="clip_scope"):
        pool.mb_sgd_messages(w, clip_scope="per_tensor", **kw)


def test_batch_mean_mode_records_batch_clipping_and_its_sweep_is_mb_sgd_only():
    from dpcore.papers.p001_isrl import experiments as fe

    x, y = _constant_silos(n=40)
    pool = SiloPool(x, y, np.full((1, 3), 40), SquaredLoss(), dtype=torch.float64)
    _, recs = alg.mb_sgd(pool, rounds=5, batch_size=4, silos_per_round=3, stepsize=[0.1], trial_of_stream=[0],
                         noise_std=[0.5], clip=2.0, clip_scope="batch_mean", return_records=True)
    rec = recs[(0, 1)]
    assert (rec.clipping, rec.sampling, rec.batch_size) == ("batch", "replacement", 4)
    assert rec.noise_multiplier == pytest.approx(0.5 / 2.0)  # noise on the one clipped mean, not K·σ on a sum
    with pytest.raises(ValueError, match="clip_scope"):
        fe.Sweep("local-sgd", (1.0,), (0.1,), 5, 2, clips=(1.0,), clip_scope="batch_mean")
    with pytest.raises(ValueError, match="clip_scope"):
        fe.Sweep("mb-sgd", (1.0,), (0.1,), 5, 2, clips=(1.0,), clip_scope="mean")


def test_batch_mean_epsilon_upper_is_the_gdp_of_sensitivity_2l_and_bounds_the_per_example_design():
    from dpcore.accounting.gaussian import epsilon_from_mu

    eps = isrl.batch_mean_epsilon_upper(noise_std=3.0, clip=1.5, rounds=9, delta=1e-5)
    assert eps == pytest.approx(epsilon_from_mu(2 * 1.5 * 3 / 3.0, 1e-5))
    assert isrl.batch_mean_epsilon_upper(noise_std=0.0, clip=1.0, rounds=1, delta=1e-5) == math.inf
    # the bound credits no amplification, so it is at least the tight ε of the per-example mechanism (sensitivity
    # 2L/K with a K-of-n draw) that App. I's σ was calibrated for
    sigma = isrl.noise_std(lipschitz=1.0, rounds=35, n=107, epsilon=1.0, delta=1 / 107**2, batch_size=15)
    per_example = isrl.mbsgd_epsilon(noise_std=sigma, lipschitz=1.0, batch_size=15, n=107, rounds=35,
                                     delta=1 / 107**2)
    assert isrl.batch_mean_epsilon_upper(noise_std=sigma, clip=1.0, rounds=35, delta=1 / 107**2) > 10 * per_example
    for kwargs, name in (({"noise_std": -1.0}, "noise_std"), ({"clip": 0.0}, "clip"), ({"rounds": 0}, "rounds"),
                         ({"delta": 1.0}, "delta")):
        base = dict(noise_std=1.0, clip=1.0, rounds=1, delta=1e-5)
        with pytest.raises(ValueError, match=name):
            isrl.batch_mean_epsilon_upper(**{**base, **kwargs})
