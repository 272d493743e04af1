"""Federated versions of the three datasets of Lowy & Razaviyayn (ICLR 2023, §6 and App. I).

Each builder returns a :class:`FederatedTrials`: T independent re-draws ("trials") of a
federation of N silos, padded to common array shapes, plus each trial's pooled test set.

* :func:`mnist_odd_even` (Fig. 4, 7; App. I.1, after Woodworth et al. 2020b): PCA to
  d = 50 fitted on all images of the split; the first n_m = ⌊min-digit-count · fraction⌋
  images of each digit; silo (e, o) for each of the 25 (even, odd) digit pairs draws
  2n_m samples *with replacement* from the pair's pooled images (a fraction ``p`` from
  all digits instead; p = 0 is the paper's "maximal heterogeneity"), labels even = 1;
  per-silo 80/20 split.  With the 60k training split and fraction 1/7 this is the paper's
  n_m = 774, n = 1238 train / 310 test per silo.
* :func:`insurance_by_charges` (Fig. 5, 8, 9; App. I.2): categorical columns label-encoded
  (alphabetical codes), a constant column, rows sorted by charges and cut into N silos
  of ⌈1338/N⌉ (the last takes the rest), a fresh 80/20 split per silo and trial, age and
  BMI standardised with the silo's training mean and (ddof = 1) standard deviation.
* :func:`obesity_by_class` (Fig. 6; App. I.3): categorical columns label-encoded, a fresh
  global 80/20 split per trial, Age/Height/Weight/CH2O/TUE standardised with training
  statistics, a constant column (d = 17), silo i = training records of class i,
  balanced by subsampling every silo *without replacement* to the smallest silo's size
  (the paper "discarded" records; the authors' script resampled with replacement).

All randomness comes from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpcore.validation import check_positive_int, check_range

__all__ = [
    "FederatedTrials",
    "pca_projection",
    "mnist_odd_even",
    "insurance_by_charges",
    "obesity_by_class",
    "INSURANCE_COLUMNS",
    "OBESITY_CLASSES",
    "global_optimum",
]

INSURANCE_COLUMNS = ("const", "age", "sex", "bmi", "children", "smoker", "region")
OBESITY_CATEGORICAL = ("Gender", "family_history_with_overweight", "FAVC", "CAEC", "SMOKE", "SCC", "CALC", "MTRANS")
OBESITY_CONTINUOUS = ("Age", "Height", "Weight", "CH2O", "TUE")
OBESITY_CLASSES = (
    "Insufficient_Weight",
    "Normal_Weight",
    "Obesity_Type_I",
    "Obesity_Type_II",
    "Obesity_Type_III",
    "Overweight_Level_I",
    "Overweight_Level_II",
)


@dataclass
class FederatedTrials:
    """T trials of an N-silo federation, padded: silo i of trial t has ``sizes[t, i]`` training records.

    ``loss`` names the model (:func:`dpcore.federated.models.make_loss`), ``metric`` the test
    metric (``"error"``: misclassification rate; ``"relative_rmse"``: sqrt(Σ(y−ŷ)²/Σ(y−ȳ_train)²)
    with ȳ_train the pooled training mean).  ``lipschitz`` is 2·max‖x‖ over the training data
    where the paper bounds L that way (``None`` where L is a clip threshold instead).
    """

    name: str
    loss: str
    metric: str
    num_outputs: int
    train_x: np.ndarray  # [T, N, n_max, d]
    train_y: np.ndarray  # [T, N, n_max]
    sizes: np.ndarray  # [T, N]
    test_x: np.ndarray  # [T, m_max, d]
    test_y: np.ndarray  # [T, m_max]
    test_sizes: np.ndarray  # [T]
    lipschitz: float | None = None
    info: dict = field(default_factory=dict)

    @property
    def num_trials(self) -> int:
        return int(self.train_x.shape[0])

    @property
    def num_silos(self) -> int:
        return int(self.train_x.shape[1])

    @property
    def dim(self) -> int:
        return int(self.train_x.shape[3])

    def silo_train(self, trial: int, silo: int) -> tuple[np.ndarray, np.ndarray]:
        """Training records of one silo (unpadded)."""
        n = int(self.sizes[trial, silo])
        return self.train_x[trial, silo, :n], self.train_y[trial, silo, :n]

    def pooled_train(self, trial: int) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = zip(*(self.silo_train(trial, i) for i in range(self.num_silos)), strict=True)
        return np.concatenate(xs), np.concatenate(ys)

    def test(self, trial: int) -> tuple[np.ndarray, np.ndarray]:
        m = int(self.test_sizes[trial])
        return self.test_x[trial, :m], self.test_y[trial, :m]


def _pad(arrays: list[list[np.ndarray]], fill: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Stack [T][N] arrays of shape [n_ti, ...] into [T, N, n_max, ...] and their sizes [T, N]."""
    sizes = np.array([[a.shape[0] for a in row] for row in arrays], dtype=np.int64)
    first = arrays[0][0]
    out = np.full((len(arrays), len(arrays[0]), int(sizes.max()), *first.shape[1:]), fill, dtype=first.dtype)
    for t, row in enumerate(arrays):
        for i, a in enumerate(row):
            out[t, i, : a.shape[0]] = a
    return out, sizes


def _pad_tests(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    padded, sizes = _pad([[a] for a in arrays])
    return padded[:, 0], sizes[:, 0]


def _stack_trials(trains_x: list, trains_y: list, tests_x: list, tests_y: list) -> tuple[np.ndarray, ...]:
    """Padded (train_x, train_y, sizes, test_x, test_y, test_sizes) of per-trial, per-silo lists."""
    train_x, sizes = _pad(trains_x)
    train_y, _ = _pad(trains_y)
    test_x, test_sizes = _pad_tests(tests_x)
    test_y, _ = _pad_tests(tests_y)
    return train_x, train_y, sizes, test_x, test_y, test_sizes


def _split(count: int, test_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random train/test split of range(count) with ⌈test_fraction·count⌉ test items (scikit-learn's rule)."""
    n_test = math.ceil(test_fraction * count)
    if not 0 < n_test < count:
        raise ValueError(f"test_fraction={test_fraction} leaves an empty train or test set for {count} records")
    perm = rng.permutation(count)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _label_codes(values) -> np.ndarray:
    """scikit-learn LabelEncoder semantics: codes of the sorted unique values."""
    uniques = np.unique(np.asarray(values))
    return np.searchsorted(uniques, np.asarray(values)).astype(np.int64)


# --------------------------------------------------------------------------- MNIST


def pca_projection(images: np.ndarray, dim: int) -> np.ndarray:
    """Project flattened images (scaled to [0, 1]) on their top ``dim`` principal components (centred)."""
    dim = check_positive_int("dim", dim)
    x = images.reshape(images.shape[0], -1).astype(np.float64) / 255.0
    if dim > x.shape[1]:
        raise ValueError(f"dim must be in [1, {x.shape[1]}], got {dim}")
    x = x - x.mean(axis=0)
    evals, evecs = np.linalg.eigh(x.T @ x)
    top = evecs[:, np.argsort(evals)[::-1][:dim]]
    top = top * np.where(top[np.abs(top).argmax(axis=0), np.arange(dim)] < 0, -1.0, 1.0)  # deterministic signs
    return x @ top


def mnist_odd_even(
    images: np.ndarray,
    labels: np.ndarray,
    *,
    trials: int,
    fraction: float = 1 / 7,
    heterogeneity: float = 0.0,
    dim: int = 50,
    test_fraction: float = 0.2,
    seed: int = 0,
) -> FederatedTrials:
    """The 25 odd/even digit-pair silos of Fig. 4 (see the module docstring).

    ``heterogeneity`` is the authors' p ∈ [0, 1]: the share of a silo's samples drawn from
    all digits rather than from its pair (p = 0: each silo sees only its two digits).
    """
    trials = check_positive_int("trials", trials)
    fraction = check_range("fraction", fraction, 1e-6, 1.0)
    p = check_range("heterogeneity", heterogeneity, 0.0, 1.0)
    labels = np.asarray(labels)
    if images.shape[0] != labels.shape[0] or set(np.unique(labels)) != set(range(10)):
        raise ValueError("images and labels must be MNIST-like: same length, digits 0..9 all present")
    counts = np.bincount(labels, minlength=10)
    per_digit = int(math.floor(counts.min() * fraction))
    if per_digit < 2:
        raise ValueError(f"fraction={fraction} leaves fewer than 2 images per digit")
    features = pca_projection(images, dim)
    chosen = {digit: np.flatnonzero(labels == digit)[:per_digit] for digit in range(10)}
    pool_all = np.concatenate([chosen[d] for d in range(10)])
    used = features[pool_all]
    lipschitz = 2.0 * float(np.linalg.norm(used, axis=1).max())
    rng = np.random.default_rng(seed)
    size = 2 * per_digit
    from_pair = int(round((1 - p) * size))
    trains_x, trains_y, tests_x, tests_y = [], [], [], []
    for _ in range(trials):
        row_x, row_y, te_x, te_y = [], [], [], []
        for even in (0, 2, 4, 6, 8):
            for odd in (1, 3, 5, 7, 9):
                pair = np.concatenate([chosen[even], chosen[odd]])
                idx = np.concatenate([rng.choice(pair, from_pair), rng.choice(pool_all, size - from_pair)])
                x, y = features[idx], (labels[idx] % 2 == 0).astype(np.float64)
                tr, te = _split(size, test_fraction, rng)
                row_x.append(x[tr])
                row_y.append(y[tr])
                te_x.append(x[te])
                te_y.append(y[te])
        trains_x.append(row_x)
        trains_y.append(row_y)
        tests_x.append(np.concatenate(te_x))
        tests_y.append(np.concatenate(te_y))
    train_x, train_y, sizes, test_x, test_y, test_sizes = _stack_trials(trains_x, trains_y, tests_x, tests_y)
    return FederatedTrials(
        "mnist-odd-even", "logistic", "error", 1, train_x, train_y, sizes, test_x, test_y, test_sizes,
        lipschitz=lipschitz,
        info={"per_digit": per_digit, "heterogeneity": p, "dim": dim, "fraction": fraction},
    )


# --------------------------------------------------------------------------- insurance


def _insurance_matrix(frame) -> tuple[np.ndarray, np.ndarray]:
    required = {"age", "sex", "bmi", "children", "smoker", "region", "charges"}
    missing = required - set(frame.columns)
    if missing:
        raise ValueError(f"insurance data lacks columns {sorted(missing)}")
    x = np.column_stack(
        [
            np.ones(len(frame)),
            frame["age"].to_numpy(float),
            _label_codes(frame["sex"]),
            frame["bmi"].to_numpy(float),
            frame["children"].to_numpy(float),
            _label_codes(frame["smoker"]),
            _label_codes(frame["region"]),
        ]
    ).astype(np.float64)
    return x, frame["charges"].to_numpy(float)


def insurance_silo_sizes(total: int, num_silos: int) -> list[int]:
    """⌈total/N⌉ records for the first N−1 silos, the rest for the last (App. I.2)."""
    num_silos = check_positive_int("num_silos", num_silos)
    size = math.ceil(total / num_silos)
    last = total - size * (num_silos - 1)
    if last < 2:
        raise ValueError(f"num_silos={num_silos} leaves the last silo with {last} records")
    return [size] * (num_silos - 1) + [last]


def insurance_by_charges(
    frame, *, num_silos: int, trials: int, test_fraction: float = 0.2, seed: int = 0
) -> FederatedTrials:
    """Heterogeneous insurance silos by level of charges (see the module docstring)."""
    trials = check_positive_int("trials", trials)
    x_all, y_all = _insurance_matrix(frame)
    order = np.argsort(y_all, kind="stable")
    bounds = np.cumsum([0, *insurance_silo_sizes(len(y_all), num_silos)])
    groups = [order[bounds[i] : bounds[i + 1]] for i in range(num_silos)]
    rng = np.random.default_rng(seed)
    trains_x, trains_y, tests_x, tests_y = [], [], [], []
    standardise = [INSURANCE_COLUMNS.index("age"), INSURANCE_COLUMNS.index("bmi")]
    for _ in range(trials):
        row_x, row_y, te_x, te_y = [], [], [], []
        for group in groups:
            tr, te = _split(len(group), test_fraction, rng)
            xtr, xte = x_all[group[tr]].copy(), x_all[group[te]].copy()
            mean = xtr[:, standardise].mean(axis=0)
            std = xtr[:, standardise].std(axis=0, ddof=1)
            xtr[:, standardise] = (xtr[:, standardise] - mean) / std
            xte[:, standardise] = (xte[:, standardise] - mean) / std
            row_x.append(xtr)
            row_y.append(y_all[group[tr]])
            te_x.append(xte)
            te_y.append(y_all[group[te]])
        trains_x.append(row_x)
        trains_y.append(row_y)
        tests_x.append(np.concatenate(te_x))
        tests_y.append(np.concatenate(te_y))
    train_x, train_y, sizes, test_x, test_y, test_sizes = _stack_trials(trains_x, trains_y, tests_x, tests_y)
    return FederatedTrials(
        f"insurance-N{num_silos}", "squared", "relative_rmse", 1, train_x, train_y, sizes, test_x, test_y,
        test_sizes, lipschitz=None, info={"num_silos": num_silos, "silo_sizes": [len(g) for g in groups]},
    )


# --------------------------------------------------------------------------- obesity


def obesity_by_class(frame, *, trials: int, test_fraction: float = 0.2, seed: int = 0) -> FederatedTrials:
    """Seven obesity-level silos (see the module docstring)."""
    trials = check_positive_int("trials", trials)
    columns = list(frame.columns)
    if len(columns) != 17 or columns[-1] != "NObeyesdad":
        raise ValueError("obesity data must have the 17 UCI columns ending with NObeyesdad")
    features = frame.iloc[:, :16].copy()
    for name in OBESITY_CATEGORICAL:
        features[name] = _label_codes(features[name])
    x_all = features.to_numpy(dtype=np.float64)
    classes = sorted(frame["NObeyesdad"].unique())
    if tuple(classes) != OBESITY_CLASSES:
        raise ValueError(f"obesity target must have the 7 classes {OBESITY_CLASSES}, got {classes}")
    y_all = _label_codes(frame["NObeyesdad"])
    cont = [columns.index(c) for c in OBESITY_CONTINUOUS]
    rng = np.random.default_rng(seed)
    trains_x, trains_y, tests_x, tests_y, maxnorm = [], [], [], [], 0.0
    for _ in range(trials):
        tr, te = _split(len(y_all), test_fraction, rng)
        xtr, xte = x_all[tr].copy(), x_all[te].copy()
        mean, std = xtr[:, cont].mean(axis=0), xtr[:, cont].std(axis=0, ddof=1)
        xtr[:, cont] = (xtr[:, cont] - mean) / std
        xte[:, cont] = (xte[:, cont] - mean) / std
        xtr = np.column_stack([np.ones(len(xtr)), xtr])
        xte = np.column_stack([np.ones(len(xte)), xte])
        ytr = y_all[tr]
        per_class = [np.flatnonzero(ytr == c) for c in range(len(classes))]
        n_min = min(len(ix) for ix in per_class)
        keep = [np.sort(rng.choice(ix, n_min, replace=False)) for ix in per_class]
        trains_x.append([xtr[ix] for ix in keep])
        trains_y.append([ytr[ix].astype(np.int64) for ix in keep])
        maxnorm = max(maxnorm, max(float(np.linalg.norm(xtr[ix], axis=1).max()) for ix in keep))
        tests_x.append(xte)
        tests_y.append(y_all[te])
    train_x, train_y, sizes, test_x, test_y, test_sizes = _stack_trials(trains_x, trains_y, tests_x, tests_y)
    return FederatedTrials(
        "obesity", "softmax", "error", len(classes), train_x, train_y, sizes, test_x, test_y, test_sizes,
        lipschitz=2.0 * maxnorm, info={"max_feature_norm": maxnorm},
    )


# --------------------------------------------------------------------------- optimum and heterogeneity


def global_optimum(trials: FederatedTrials, trial: int, *, iterations: int = 100, tol: float = 1e-10) -> dict:
    """w* of the pooled training loss by damped Newton (float64), F* and υ*² = (1/N) Σ_i ‖∇F̂_i(w*)‖².

    App. I follows Woodworth et al. (2020b): Newton's method for w*, then the average
    squared norm of the silos' gradients at w*.  The softmax Hessian is singular (shift
    invariance), so the Newton system is solved by least squares.
    """
    import torch

    from dpcore.federated.models import make_loss

    loss = make_loss(trials.loss, trials.num_outputs)
    x, y = trials.pooled_train(trial)
    xt, yt = torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y)
    k, d = trials.num_outputs, trials.dim

    def objective(wflat: torch.Tensor) -> torch.Tensor:
        w = wflat.view(k, d)
        return loss.loss(xt @ w.T, yt).mean()

    w = torch.zeros(k * d, dtype=torch.float64)
    for _ in range(iterations):
        g = torch.autograd.functional.jacobian(objective, w)
        h = torch.autograd.functional.hessian(objective, w)
        step = torch.linalg.lstsq(h, g.unsqueeze(-1)).solution[:, 0]
        decrement = float(g @ step)
        f0, t = float(objective(w)), 1.0
        while float(objective(w - t * step)) > f0 - 0.25 * t * decrement and t > 1e-8:
            t *= 0.5
        w = w - t * step
        if decrement <= tol:
            break
    f_star = float(objective(w))
    grads = []
    for i in range(trials.num_silos):
        xi, yi = trials.silo_train(trial, i)
        xi_t, yi_t = torch.as_tensor(xi, dtype=torch.float64), torch.as_tensor(yi)
        wi = w.clone().requires_grad_(True)
        fi = loss.loss(xi_t @ wi.view(k, d).T, yi_t).mean()
        (gi,) = torch.autograd.grad(fi, wi)
        grads.append(float(gi @ gi))
    return {"w_star": w.view(k, d).numpy(), "f_star": f_star, "upsilon2": float(np.mean(grads))}
