"""What a private run did, in one vocabulary shared by training, federated code and accounting.

Sampling (how each step's batch is drawn):

* ``"poisson"`` -- every record joins each batch independently with probability q (add/remove-one
  neighbours; Abadi et al. 2016).
* ``"shuffle"`` -- one random permutation per epoch cut into disjoint batches (replace-one neighbours).
* ``"fixed"``   -- each batch is a fresh uniform subset of fixed size drawn without replacement
  (replace-one neighbours; Wang, Balle, Kasiviswanathan 2019).

A run record may also say ``"replacement"`` (each batch is K independent uniform draws *with* replacement,
as the silos of ISRL-DP MB-SGD do; Lowy & Razaviyayn 2023, Alg. 2): replace-one neighbours, sensitivity 2C.  The
registry's with-replacement entries account for it (:mod:`dpcore.accounting.registry`: ``"with-replacement"``, the
tight PLD of :mod:`dpcore.accounting.replacement` for individual clipping; ``"with-replacement-batch-mean"``, the
GDP bound of a clipped minibatch mean); mixed clipping with replacement has no entry and is refused.

Neighbours and the noise multiplier: σ always means noise std σ·C on a sum of terms clipped to C (the DP-SGD
convention of Abadi et al. 2016), whatever the sampling; the neighbouring relation the sampling implies is applied
inside the accountants (:func:`effective_noise_multiplier`): add/remove-one for Poisson sampling (sensitivity C,
so the Gaussian's multiplier is σ), replace-one for fixed-size batches and shuffling (sensitivity 2C, multiplier
σ/2).  A paper that writes its noise as N(0, (2Cσ)²) (van Dijk et al., "Generalizing DP-SGD with Shuffling and
Batch Clipping", Algorithm 1) says so with ``noise_convention="replace_one"`` (std 2Cσ): κ·σ·C with κ of
:data:`NOISE_FACTOR`.

Epochs to steps (:func:`epochs_to_steps`, :func:`steps_for_epochs`): the one rule of the trainer, the samplers, the
asynchronous clients, the CLI and the explorers, max(1, round(E · steps per epoch)), with ⌊n/b⌋ rounds per epoch
for shuffling and round(n/b) otherwise (:func:`steps_per_epoch`).  Groups (:func:`clipped_group_size`,
:func:`groups_per_batch`) and sensitivities (:func:`step_sensitivity`) are defined here too, and nowhere else.

Clipping (what is clipped to norm C before the noise is added):

* ``"individual"`` -- every per-example gradient (standard DP-SGD);
* ``"batch"``      -- the mean gradient of the batch (van Dijk et al., "Generalizing DP-SGD with
  Shuffling and Batch Clipping", Algorithm 1 with m = 1);
* ``"mixed"``      -- the mean gradients of the m groups of a batch (same paper, 1 < m < batch size).
"""

from __future__ import annotations

import math
import numbers

from dpcore.validation import check_choice, check_positive, check_positive_int, check_rate

__all__ = [
    "SAMPLINGS",
    "RECORD_SAMPLINGS",
    "CLIPPINGS",
    "NOISE_CONVENTIONS",
    "NOISE_FACTOR",
    "ADJACENCY",
    "SENSITIVITY",
    "check_sampling",
    "check_clipping",
    "effective_noise_multiplier",
    "steps_per_epoch",
    "steps_for_epochs",
    "epochs_to_steps",
    "steps_for_sample_count",
    "ROUNDS_PER_EPOCH_RULE",
    "ROUNDS_PER_EPOCH_FROM_RATE_RULE",
    "EPOCHS_TO_STEPS_RULE",
    "clipped_group_size",
    "groups_per_batch",
    "groups_per_round",
    "step_sensitivity",
    "sample_rate_of",
    "sizes_for_rates",
]

SAMPLINGS: tuple[str, ...] = ("poisson", "shuffle", "fixed")
CLIPPINGS: tuple[str, ...] = ("individual", "batch", "mixed")
#: What a run record may say: the samplings above, plus sampling with replacement (federated MB-SGD silos).
RECORD_SAMPLINGS: tuple[str, ...] = (*SAMPLINGS, "replacement")
#: What σ means: noise std κ·σ·C with κ = NOISE_FACTOR[convention] (the record's ``noise_convention``).
NOISE_CONVENTIONS: tuple[str, ...] = ("standard", "replace_one")
NOISE_FACTOR: dict[str, float] = {"standard": 1.0, "replace_one": 2.0}
#: The epochs → steps rule in words (help texts, e.g. the CLI's ``--epochs``; tested against :func:`steps_per_epoch`
#: and :func:`epochs_to_steps`): rounds per epoch by sampling, from q alone, and T from E.
ROUNDS_PER_EPOCH_RULE: dict[str, str] = {"poisson": "round(n / b)", "fixed": "round(n / b)", "shuffle": "floor(n / b)"}
ROUNDS_PER_EPOCH_FROM_RATE_RULE: str = "round(1 / q)"
EPOCHS_TO_STEPS_RULE: str = "max(1, round(E * rounds per epoch)), 0 for E = 0"
#: The neighbouring relation each sampling implies.
ADJACENCY: dict[str, str] = {"poisson": "add/remove-one", "fixed": "replace-one", "shuffle": "replace-one"}
#: Sensitivity of one step's sum of individually clipped terms, in multiples of C, under :data:`ADJACENCY`.
SENSITIVITY: dict[str, float] = {"poisson": 1.0, "fixed": 2.0, "shuffle": 2.0}
#: Sensitivity of one step when the clipped terms are group means of more than one record: under add/remove-one
#: (Poisson) adding a record moves the one clipped batch mean anywhere in the ball of radius C, so 2C (van Dijk
#: et al., "Generalizing DP-SGD with Shuffling and Batch Clipping", Lemma 1); replace-one stays 2C; mixed
#: clipping under Poisson sampling has no bound (adding a record shifts the groups of all later records).
BATCH_SENSITIVITY: dict[str, float] = {"poisson": 2.0, "fixed": 2.0, "shuffle": 2.0, "replacement": 2.0}


def check_sampling(sampling: object, *, allowed: tuple[str, ...] = SAMPLINGS) -> str:
    """``sampling`` as one of :data:`SAMPLINGS` (and of ``allowed``, a tuple of them); ``ValueError`` otherwise."""
    if not isinstance(allowed, (tuple, list)) or not all(isinstance(a, str) and a in SAMPLINGS for a in allowed):
        raise ValueError(f"allowed must be a tuple of samplings from {SAMPLINGS}, got {allowed!r}")
    check_choice("sampling", sampling, SAMPLINGS)
    if sampling not in allowed:
        raise ValueError(f"sampling={sampling!r} is not supported here; allowed: {', '.join(allowed)}")
    return str(sampling)


def check_clipping(clipping: object) -> str:
    """``clipping`` as one of :data:`CLIPPINGS`; ``ValueError`` otherwise."""
    return check_choice("clipping", clipping, CLIPPINGS)


def effective_noise_multiplier(noise_multiplier: float, sampling: str, noise_convention: str = "standard") -> float:
    """The Gaussian's multiplier against the sensitivity of one step: κ·σ / Δ.

    σ = ``noise_multiplier`` with noise std κ·σ·C (κ = 1 for ``"standard"``, 2 for ``"replace_one"``), Δ the
    sensitivity of :data:`SENSITIVITY` (C for Poisson's add/remove-one, 2C for replace-one): for standard noise
    with fixed-size batches the multiplier is σ/2 (Wang, Balle, Kasiviswanathan 2019 analyse the Gaussian
    against the replace-one sensitivity).
    """
    sigma = check_positive("noise_multiplier", noise_multiplier)
    check_sampling(sampling)
    check_choice("noise_convention", noise_convention, NOISE_CONVENTIONS)
    return NOISE_FACTOR[noise_convention] * sigma / SENSITIVITY[sampling]


def steps_per_epoch(sampling: str, dataset_size: int, batch_size: int) -> int:
    """Rounds per epoch, as the trainer runs them: ⌊n/b⌋ for shuffling (the remainder is dropped), round(n/b)
    (at least 1) for Poisson and fixed-size sampling."""
    check_sampling(sampling)
    sample_rate_of(batch_size, dataset_size)  # b in [1, n]
    n, b = int(dataset_size), int(batch_size)
    return n // b if sampling == "shuffle" else max(1, round(n / b))


def step_sensitivity(sampling: str, clipping: str) -> float:
    """Δ/C of one step's sum of clipped terms under the sampling's neighbouring relation (:data:`ADJACENCY`):
    :data:`SENSITIVITY` for individual clipping, :data:`BATCH_SENSITIVITY` for batch clipping and for mixed
    clipping with replace-one neighbours; ``ValueError`` for mixed clipping under Poisson sampling (unbounded)."""
    check_choice("sampling", sampling, RECORD_SAMPLINGS)
    check_clipping(clipping)
    if clipping == "mixed" and sampling == "poisson":
        raise ValueError(
            "Poisson sampling with mixed clipping cannot be accounted for: adding one record shifts the "
            "group of every later record, so one step's sensitivity is not bounded by 2C"
        )
    if clipping == "individual":
        return SENSITIVITY.get(sampling, 2.0)  # with replacement: replace-one, 2C
    return BATCH_SENSITIVITY[sampling]


def clipped_group_size(clipping: str, batch_size: int, group_size: int | None = None) -> int:
    """s, the records per clipped group: 1 (individual), the whole batch (batch), ``group_size`` (mixed; van Dijk
    et al., Algorithm 1's m groups of s).  A (Poisson or micro-)batch shorter than ``group_size`` is one partial
    group: s is still ``group_size`` (the trainer's behaviour since its first version)."""
    check_clipping(clipping)
    b = check_positive_int("batch_size", batch_size)
    if clipping == "individual":
        return 1
    if clipping == "batch":
        return b
    if group_size is None:
        raise ValueError("clipping='mixed' needs group_size (records per clipped group)")
    return check_positive_int("group_size", group_size)


def groups_per_round(clipping: str, mean_batch_size: float, group_size: int | None = None) -> float:
    """The expected number of clipped groups per round for a (mean) batch size: b (individual), 1 (batch), b/s
    (mixed) -- the run record's ``groups_per_round``, the divisor of the ``"mean"`` reduction."""
    check_clipping(clipping)
    b = check_positive("mean_batch_size", mean_batch_size)
    if clipping == "individual":
        return b
    if clipping == "batch":
        return 1
    if group_size is None:
        raise ValueError("clipping='mixed' needs group_size (records per clipped group)")
    return b / check_positive_int("group_size", group_size)


def groups_per_batch(clipping: str, batch_size: int, group_size: int | None = None) -> int:
    """m = ⌊b/s⌋, the clipped groups of one batch (at least 1; the remainder of a mixed batch is dropped)."""
    s = clipped_group_size(clipping, batch_size, group_size)  # validates batch_size first
    return max(1, int(batch_size) // s)


def _rounds_per_epoch(
    sampling: str, dataset_size: int | None, batch_size: int | None, sample_rate: float | None
) -> float:
    if dataset_size is None and batch_size is None:
        if sample_rate is None:
            raise ValueError("give dataset_size and batch_size, or sample_rate, to convert epochs to steps")
        if sampling == "shuffle":
            raise ValueError("sampling='shuffle' needs dataset_size and batch_size to convert epochs (⌊n/b⌋ rounds)")
        q = check_rate("sample_rate", sample_rate)
        if q < 1e-300:  # 1/q would overflow
            raise ValueError(f"sample_rate must be in [1e-300, 1] to count epochs in steps, got {q:g}")
        return float(max(1, round(1.0 / q)))  # n/b = 1/q
    if dataset_size is None or batch_size is None:
        raise ValueError("give both dataset_size and batch_size (or only sample_rate) to convert epochs to steps")
    per_epoch = steps_per_epoch(sampling, dataset_size, batch_size)
    if sample_rate is not None:
        sample_rate_of(batch_size, dataset_size, sample_rate)  # q = b/n: the one check
    return float(per_epoch)


def _check_epochs(epochs: object) -> None:
    """``epochs`` a finite real number >= 0 (an integer of any size counts as finite); ``ValueError`` otherwise."""
    real = not isinstance(epochs, bool) and isinstance(epochs, numbers.Real)
    finite = real and (isinstance(epochs, numbers.Integral) or math.isfinite(epochs))  # type: ignore[arg-type]
    if not finite or epochs < 0:  # type: ignore[operator]
        raise ValueError(f"epochs must be a finite number in [0, inf), got {epochs!r}")


def steps_for_epochs(
    epochs: float,
    *,
    sampling: str = "poisson",
    dataset_size: int | None = None,
    batch_size: int | None = None,
    sample_rate: float | None = None,
) -> int:
    """The number of steps of ``epochs`` epochs, exactly as the trainer counts them (``dpcore.training``):
    max(1, round(E · :func:`steps_per_epoch`)), and 0 for E = 0.

    Give ``dataset_size`` and ``batch_size``, or only ``sample_rate`` q (then n/b = 1/q: round(1/q) rounds per
    epoch; shuffling needs the sizes).  ``epochs`` is a finite number >= 0.

    >>> steps_for_epochs(20, dataset_size=50_000, batch_size=512), steps_for_epochs(1e-10, sample_rate=0.5)
    (1960, 1)
    """
    _check_epochs(epochs)
    check_sampling(sampling)
    return epochs_to_steps(epochs, _rounds_per_epoch(sampling, dataset_size, batch_size, sample_rate))


def epochs_to_steps(epochs: float, per_epoch: float) -> int:
    """The one epochs → steps rule: max(1, round(E · rounds per epoch)), 0 for E = 0.  The trainer, the samplers,
    the asynchronous clients, the CLI, the explorers and :func:`dpcore.accounting.dpsgd.dpsgd_epsilon` all count
    through it (with ``per_epoch`` from :func:`steps_per_epoch`).

    >>> epochs_to_steps(10, steps_per_epoch("poisson", 1000, 624))  # round(1000/624) = 2 rounds per epoch
    20
    """
    _check_epochs(epochs)
    if isinstance(per_epoch, bool) or not isinstance(per_epoch, numbers.Real) or not 1 <= per_epoch < math.inf:
        raise ValueError(f"per_epoch must be a finite number of rounds in [1, inf), got {per_epoch!r}")
    if epochs == 0:
        return 0
    try:
        total = float(epochs) * float(per_epoch)
    except OverflowError:  # an integer beyond the floats
        total = math.inf
    if not math.isfinite(total):
        raise ValueError(f"epochs={epochs!r} times per_epoch={per_epoch!r} overflows: too many steps")
    return max(1, round(total))


def steps_for_sample_count(epochs: float, dataset_size: int, batch_size: int) -> int:
    """Rounds T of a run sized by its gradient computations, paper 000's asynchronous setting: max(1, round(E·n/b)),
    0 for E = 0.

    van Dijk, N. V. Nguyen, T. N. Nguyen, L. M. Nguyen, P. H. Nguyen, "Proactive DP" (Sec. 2.2, App. D) fixes
    K ≈ kN gradient computations per client for k "epochs" of N examples at constant sample size s, so
    T = K/s = round(kN/s) rounds and K = T·s (:mod:`dpcore.experiments.asynchronous`, the clients' step count and
    the step size of their last round).  This differs from :func:`epochs_to_steps` (the trainer's rule, E whole
    passes of round(n/b) rounds each, max(1, round(E · round(n/b)))) where n/b is not a whole number: for n = 1,000,
    b = 624 and E = 10 it gives 16 rounds where the trainer runs 20.  The committed paper-000 runs were sized by
    this rule; it is kept, named, so that their step counts do not change.

    >>> steps_for_sample_count(10, 1000, 624), epochs_to_steps(10, steps_per_epoch("poisson", 1000, 624))
    (16, 20)
    """
    _check_epochs(epochs)
    sample_rate_of(batch_size, dataset_size)  # b in [1, n]
    n, b = int(dataset_size), int(batch_size)
    if epochs == 0:
        return 0
    try:
        total = epochs * n / b  # the committed runs' arithmetic: (E·n)/b, exact for integer E (int / int)
    except OverflowError:
        total = math.inf
    if not math.isfinite(total):
        raise ValueError(f"epochs={epochs!r} times dataset_size/batch_size = {n}/{b} overflows: too many steps")
    return max(1, round(total))


def sample_rate_of(batch_size: int, dataset_size: int, sample_rate: float | None = None) -> float:
    """q = b/n, the one place the rule lives (the CLI, :func:`steps_for_epochs`, the run record): ``batch_size`` in
    [1, ``dataset_size``], and a given ``sample_rate`` must agree with b/n (relative 1e-9)."""
    n = check_positive_int("dataset_size", dataset_size)
    b = check_positive_int("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must be in [1, dataset_size={n}], got {b}")
    if sample_rate is not None:
        q = check_rate("sample_rate", sample_rate)
        if not math.isclose(q, b / n, rel_tol=1e-9):
            raise ValueError(f"sample_rate={q:g} disagrees with batch_size / dataset_size = {b}/{n} = {b / n:g}")
    return b / n


def sizes_for_rates(rates: list[float], dataset_size: int | None = None) -> tuple[int, list[int]]:
    """(n, [b_1, …]) with b_i / n == q_i exactly in floating point, for rates q_i in (0, 1] (trusted): a run record
    of Poisson steps known by their rates only (``dpsgd_epsilon(sample_rate=…)``, a dp_accounting event).

    ``dataset_size`` is used when every q_i·n is a whole batch with b_i/n == q_i; otherwise n is the smallest common
    denominator of the rates (each the simplest fraction within 1e-9 of q_i that rounds to it, else q_i's exact
    binary value), so that the accountants see exactly the rates asked for."""
    from fractions import Fraction

    if isinstance(rates, (str, bytes)) or not isinstance(rates, (list, tuple)) or not rates:
        raise ValueError(f"rates must be a non-empty list of sample rates in (0, 1], got {rates!r}")
    rates = [check_rate("rates", q) for q in rates]
    if dataset_size is not None:
        dataset_size = check_positive_int("dataset_size", dataset_size)
        batches = [round(q * dataset_size) for q in rates]
        if all(1 <= b <= dataset_size and b / dataset_size == q for b, q in zip(batches, rates, strict=True)):
            return dataset_size, batches
    fractions = []
    for q in rates:
        f = Fraction(q).limit_denominator(10**9)
        fractions.append(f if f.numerator / f.denominator == q else Fraction(q))
    n = math.lcm(*(f.denominator for f in fractions))
    return n, [f.numerator * (n // f.denominator) for f in fractions]
