"""Positive controls of the training pipelines (issue 51): published private-training accuracies, their settings,
and :func:`control_frame`, which sets our runs of those settings (experiment ``ref_controls``) beside them.

A "not reproduced" is only as credible as the pipeline that failed to reproduce; each control here trains a
published setting with OUR trainer and data loaders, so a control that holds vouches for the pipelines named in its
``pipelines`` tag, and one that misses says what our pipeline costs.  The published numbers and every setting live
once, here (:data:`CONTROLS`); :mod:`dpcore.papers.reference.training` plans the runs from them.

**Opacus's MNIST example** (pytorch/opacus@4d0ebc84613d, ``examples/mnist_README.md`` L38-62, four rows: command and
"accuracy averaged over 10 runs" mean ± ``np.std`` of the runs, ``examples/mnist.py`` L265-269): SampleConvNet
(``examples/mnist.py`` L38-55), plain SGD (``momentum=0``, L248), batch 240 made Poisson by ``make_private`` (sample
rate 240/60,000, L251-259), per-sample clipping to C and noise σ·C on the sum, inputs normalised with
(0.1307, 0.3081) (L33-35, L217-221), the final model tested after the last epoch (L261-263).  The non-private row
runs the same loader without DP: fixed batches of 240 in file order (no ``shuffle``, L212-227); ours shuffles
every epoch (250 batches of 240).

**Tramèr & Boneh 2021**, "Differentially private learning needs better features (or much more data)", ICLR 2021
(ftramer/Handcrafted-DP@6568e8f74d93, ``README.md`` L31-39 the table, L64-73 and L75-88 the commands): at
(ε = 3, δ = 1e-5), end-to-end CNN / ScatterNet + linear / ScatterNet + CNN.  Common to their code (``cnns.py``
L15-20 and ``baselines.py`` L16-19 defaults): SGD with momentum 0.9, per-sample clip norm C = 0.1, and Opacus 0.13's
RDP accountant on their ``ORDERS`` with the Mironov conversion (``dp_utils.py`` L8-30; opacus v0.13.0
``privacy_analysis.py`` L298: ε = RDP(α) − log δ/(α − 1)); the sample rate of the accounting is B/N
(``cnns.py`` L89-95), with ⌊N/B⌋ steps per epoch.  Their training takes shuffled batches; their accountant assumes
Poisson sampling, which is what we run (q = B/N, T = epochs × ⌊N/B⌋).  The README's commands pass no ``--epochs``
(the code's default is 100); σ was calibrated "so as to consume the privacy budget" after E epochs (README L50-61,
L73: 40, 40 and 30 for the end-to-end CNNs).  For every other cell E is inferred here as the epochs at which their
accountant puts σ's ε at 3 (σ rounded to two digits; MNIST ScatterNet + CNN: σ = 1.35 sits between E = 22, ε = 2.96,
and E = 23, ε = 3.02: E = 23).  We train exactly E epochs: ε = 3 is the budget of the published cell.
BN ("frozen batch normalisation") cells release the features' per-channel mean and variance privately first
(``dp_utils.py`` L87-182, σ_BN = 8; :mod:`dpcore.training.private_norm`), composed with training by RDP
(README L100-108); our ε "total" is that composition for what ran.  Their inputs: MNIST / Fashion-MNIST pixels in
[0, 1] (``data.py`` L53-69); CIFAR-10 normalised with ImageNet's mean and std before the scattering (L27-29, ours:
[0, 1] pixels; with BN standardisation per scattering channel the per-colour affine map changes only the zeroth-order
coefficient's offset, which the standardisation removes); the end-to-end CIFAR-10 CNN here takes our ``cifar10``
normalisation (CIFAR-10's own channel statistics, not ImageNet's).  Their README reports one number per cell; which
epoch's test accuracy (their code logs every epoch, ``cnns.py`` L101-131, and early-stops ``cnns.py`` after 20
epochs without a better test accuracy) is not stated there, so :func:`control_frame` gives both the final iterate
(primary, what ε = 3 at epoch E buys) and the best epoch (a selection on the test set).  Spread: not stated (one
number per cell); tolerance is for the claims' rules (issue 50) to set.

Paper 002's §5.1 quotes two ScatterNet + CNN cells as 66.9 % (CIFAR-10) and 87.2 % (FMNIST) -- the numbers of an
earlier version of Tramèr & Boneh's paper; the README's (final version) are 69.3 % and 89.0 %.  Both are in the
frame's ``also_quoted`` column (claim keys; the printed numbers live in paper 002's claims) so the claim rules can
decide ``sec5.1.tb.*`` from the same runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpcore.validation import check_choice

__all__ = [
    "control_note",
    "control_runs",
    "self_control",
    "EXPERIMENT",
    "reduced",
    "DELTA",
    "OPACUS_REPO",
    "OPACUS_COMMIT",
    "TB_REPO",
    "TB_COMMIT",
    "TB_ORDERS",
    "Published",
    "Control",
    "CONTROLS",
    "CONTROL_COLUMNS",
    "run_name",
    "control_frame",
    "control_table",
    "summarize",
]

DELTA = 1e-5
#: the experiment whose runs are the controls (registered by :mod:`dpcore.papers.reference.training`)
EXPERIMENT = "ref_controls"


def reduced(profile: str) -> bool:
    """Whether ``profile``'s runs are reduced (the quick profile)."""
    return check_choice("profile", profile, ("quick", "paper")) == "quick"


OPACUS_REPO = "pytorch/opacus"
OPACUS_COMMIT = "4d0ebc84613d214fbfd37fbfd1390e3747a625ce"
TB_REPO = "ftramer/Handcrafted-DP"
TB_COMMIT = "6568e8f74d93b5e39c5e7a612962ddf34acaa22c"
#: Tramèr & Boneh's RDP orders (ftramer/Handcrafted-DP@6568e8f dp_utils.py L8)
TB_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))
#: Tramèr & Boneh's private normalisation noise (README.md L79-87: --bn_noise_multiplier=8)
TB_BN_SIGMA = 8.0


@dataclass(frozen=True)
class Published:
    """A published accuracy: value (%), spread (% or None when not stated), what the spread is, the number of runs
    behind it (None: not stated), the (ε, δ) it was published at (ε = inf: non-private), the source."""

    value: float
    spread: float | None
    spread_kind: str
    runs: int | None
    epsilon: float
    delta: float
    citation: str
    readout: str


@dataclass(frozen=True)
class Control:
    """One published setting, as our :class:`~dpcore.experiments.config.RunConfig` will run it.

    ``steps_per_epoch``: rounds per epoch of a Poisson run (``None``: a non-private run that shuffles, epoch-based).
    ``pipelines``: which of our reproductions' pipelines the control vouches for.  ``also_quoted``: the claim keys of
    the same cell quoted elsewhere (their printed values live in those papers' claims).  ``differences``: what we
    run differently, said.
    """

    key: str
    claim_key: str
    data: str
    dataset: str
    model: str
    model_kwargs: Mapping[str, Any]
    batch_size: int
    lr: float
    noise_multiplier: float
    clip_norm: float | None
    epochs: int
    steps_per_epoch: int | None
    momentum: float
    normalization: str
    published: Published
    pipelines: str
    command: str
    seeds: tuple[int, ...] = (0,)
    differences: str = ""
    also_quoted: tuple[str, ...] = ()

    @property
    def private(self) -> bool:
        return self.clip_norm is not None

    @property
    def steps(self) -> int | None:
        return None if self.steps_per_epoch is None else self.epochs * self.steps_per_epoch


def _opacus(row: str, value: float, spread: float, eps: float, lines: str, command: str, *, lr: float,
            sigma: float, clip: float | None, epochs: int) -> Control:  # fmt: skip
    cite = f"{OPACUS_REPO}@{OPACUS_COMMIT[:7]} examples/mnist_README.md L{lines}: `{command}`"
    pub = Published(value, spread, "std over runs (np.std, examples/mnist.py L265-269)", 10, eps, DELTA, cite,
                    "final model after the last epoch (examples/mnist.py L261-263)")  # fmt: skip
    private = clip is not None
    return Control(
        key=f"opacus_mnist/{row}", claim_key=f"ref.control.opacus.mnist.{row}", data="mnist", dataset="mnist",
        model="sample_convnet", model_kwargs={"variant": "opacus"}, batch_size=240, lr=lr, noise_multiplier=sigma,
        clip_norm=clip, epochs=epochs, steps_per_epoch=250 if private else None, momentum=0.0,
        normalization="groupnorm", published=pub, seeds=(0, 1, 2), command=command,
        pipelines="MNIST images normalised (0.1307, 0.3081), DP-SGD with Poisson sampling, per-sample clipping: the "
                  "trainer behind paper 003's MNIST grid (Table 3) and paper 000's MNIST runs",
        differences="" if private else "non-private: ours shuffles every epoch (Opacus's loader: file order, no "
                                       "shuffle); 250 batches of 240 per epoch",
    )  # fmt: skip


def _tb(data: str, arch: str, value: float, *, batch: int, lr: float, sigma: float, epochs: int, norm: str,
        line: int, command: str, pipelines: str, seeds: tuple[int, ...] | None = None, differences: str = "",
        also: tuple[str, ...] = ()) -> Control:  # fmt: skip
    n = 50_000 if data == "cifar10" else 60_000
    if seeds is None:  # the ScatterNet cells: 3 seeds (queued after every seed 0); the end-to-end CNNs: 1
        seeds = (0,) if arch == "cnn" else (0, 1, 2)
    cite = f"{TB_REPO}@{TB_COMMIT[:7]} README.md L37-39 (table), L{line}: `{command}`; {epochs} epochs"
    pub = Published(
        value,
        None,
        "not stated (one number per cell)",
        None,
        3.0,
        DELTA,
        cite,
        "one test accuracy per cell; which epoch's is not stated (their code logs every epoch)",
    )
    if arch == "cnn":
        dataset = {"mnist": "mnist01", "fmnist": "fmnist01", "cifar10": "cifar10"}[data]
        model, kwargs = ("tb_cifar_cnn", {}) if data == "cifar10" else ("sample_convnet", {"variant": "tramer_boneh"})
    else:
        dataset = f"{data}_scatter"
        model = "scatter_linear" if arch == "scatter_linear" else "scatter_cnn"
        kwargs = {"dataset": data, **({"norm": "standardize"} if norm == "private_bn" else {})}
    return Control(
        key=f"tb/{data}/{arch}", claim_key=f"ref.control.tb.{data}.{arch}", data=data, dataset=dataset, model=model,
        model_kwargs=kwargs, batch_size=batch, lr=lr, noise_multiplier=sigma, clip_norm=0.1, epochs=epochs,
        steps_per_epoch=n // batch, momentum=0.9, normalization=norm, published=pub, seeds=seeds, command=command,
        pipelines=pipelines, differences=differences, also_quoted=tuple(also),
    )  # fmt: skip


_P002_CIFAR = (
    "ScatterNet (J = 2, L = 8) features of our CIFAR-10 copy (the JPEG q75 mirror when the publisher's "
    "files are absent), Poisson DP-SGD: the pipeline of paper 002's Table I CIFAR-10 block"
)
_P002_FMNIST = (
    "ScatterNet features of Fashion-MNIST (the original files), Poisson DP-SGD: paper 002's Table I FMNIST block"
)
_MNIST_SCAT = "ScatterNet features of MNIST: our scattering transform on the original MNIST (no paper's pipeline)"

#: run prefix -> control; the order is the priority of the CPU lane (cheapest and most needed first)
CONTROLS: dict[str, Control] = {c.key: c for c in (
    _opacus("nonprivate", 98.94, 0.32, math.inf, "40-44", "--disable-dp --n=20 --lr=.1 -b=240", lr=0.1, sigma=0.0,
            clip=None, epochs=20),
    _opacus("eps6.86", 97.09, 0.17, 6.86, "46-50", "-n=45 --lr=.25 --sigma=.7 -c=1.5 -b=240", lr=0.25, sigma=0.7,
            clip=1.5, epochs=45),
    _opacus("eps2.91", 96.78, 0.21, 2.91, "52-56", "-n 60 --lr=.15 --sigma=1.1 -c=1.0 -b=240", lr=0.15, sigma=1.1,
            clip=1.0, epochs=60),
    _opacus("eps1.16", 94.63, 0.34, 1.16, "58-62", "-n=15 --lr=.25 --sigma=1.3 -c=1.5 -b=240", lr=0.25, sigma=1.3,
            clip=1.5, epochs=15),
    _tb("cifar10", "scatter_cnn", 69.3, batch=8192, lr=4.0, sigma=5.67, epochs=60, norm="private_bn", line=87,
        command="python3 cnns.py --dataset=cifar10 --use_scattering --batch_size=8192 --lr=4 --input_norm=BN "
                "--bn_noise_multiplier=8 --noise_multiplier=5.67", pipelines=_P002_CIFAR,
        also=("sec5.1.tb.cifar10.acc_eps3",),
        differences="pixels in [0, 1] before the scattering (theirs: ImageNet mean/std); our CIFAR-10 copy"),
    _tb("cifar10", "scatter_linear", 67.0, batch=8192, lr=4.0, sigma=5.67, epochs=60, norm="private_bn", line=81,
        command="python3 baselines.py --dataset=cifar10 --batch_size=8192 --lr=4 --input_norm=BN "
                "--bn_noise_multiplier=8 --noise_multiplier=5.67", pipelines=_P002_CIFAR,
        differences="pixels in [0, 1] before the scattering (theirs: ImageNet mean/std); our CIFAR-10 copy"),
    _tb("fmnist", "scatter_cnn", 89.0, batch=2048, lr=4.0, sigma=2.15, epochs=40, norm="groupnorm", line=86,
        command="python3 cnns.py --dataset=fmnist --use_scattering --batch_size=2048 --lr=4 --input_norm=GroupNorm "
                "--num_groups=27 --noise_multiplier=2.15", pipelines=_P002_FMNIST,
        also=("sec5.1.tb.fmnist.acc_eps3",)),
    _tb("fmnist", "scatter_linear", 89.7, batch=8192, lr=16.0, sigma=4.05, epochs=40, norm="groupnorm", line=80,
        command="python3 baselines.py --dataset=fmnist --batch_size=8192 --lr=16 --input_norm=GroupNorm "
                "--num_groups=27 --noise_multiplier=4.05", pipelines=_P002_FMNIST),
    _tb("mnist", "scatter_cnn", 98.7, batch=1024, lr=1.0, sigma=1.35, epochs=23, norm="private_bn", line=85,
        command="python3 cnns.py --dataset=mnist --use_scattering --batch_size=1024 --lr=1 --input_norm=BN "
                "--bn_noise_multiplier=8 --noise_multiplier=1.35", pipelines=_MNIST_SCAT,
        differences="E = 23 inferred from sigma (their accountant: 2.96 at 22 epochs, 3.02 at 23)"),
    _tb("mnist", "scatter_linear", 98.7, batch=4096, lr=8.0, sigma=3.04, epochs=40, norm="private_bn", line=79,
        command="python3 baselines.py --dataset=mnist --batch_size=4096 --lr=8 --input_norm=BN "
                "--bn_noise_multiplier=8 --noise_multiplier=3.04", pipelines=_MNIST_SCAT),
    _tb("mnist", "cnn", 98.1, batch=512, lr=0.5, sigma=1.23, epochs=40, norm="groupnorm", line=68,
        command="python3 cnns.py --dataset=mnist --batch_size=512 --lr=0.5 --noise_multiplier=1.23",
        pipelines="MNIST images in [0, 1], a small Tanh CNN, Poisson DP-SGD: paper 003's MNIST grid"),
    _tb("fmnist", "cnn", 86.0, batch=2048, lr=4.0, sigma=2.15, epochs=40, norm="groupnorm", line=69,
        command="python3 cnns.py --dataset=fmnist --batch_size=2048 --lr=4 --noise_multiplier=2.15",
        pipelines="Fashion-MNIST images in [0, 1], end-to-end CNN (no paper's pipeline: the data loader)"),
    _tb("cifar10", "cnn", 59.2, batch=1024, lr=1.0, sigma=1.54, epochs=30, norm="groupnorm", line=70,
        command="python3 cnns.py --dataset=cifar10 --batch_size=1024 --lr=1 --noise_multiplier=1.54",
        pipelines="CIFAR-10 images of our copy (JPEG q75 mirror), end-to-end CNN: paper 003's / paper 000's CIFAR-10 "
                  "runs", differences="inputs normalised with CIFAR-10's channel statistics (theirs: ImageNet's)"),
)}  # fmt: skip


def run_name(control: Control, seed: int) -> str:
    """``<control key>/seed<k>``: e.g. ``tb/cifar10/scatter_cnn/seed0``."""
    return f"{control.key}/seed{seed}"


#: columns of :func:`control_frame`, in order
CONTROL_COLUMNS = (
    "key", "claim_key", "data", "dataset", "model", "pipelines", "published_pct", "published_spread_pct",
    "published_spread_kind", "published_runs", "published_readout", "citation", "also_quoted", "their_epsilon",
    "delta", "seeds_planned", "seeds_done", "final_pct", "best_pct", "mean_final_pct", "std_final_pct",
    "mean_best_pct", "std_best_pct", "epsilon_training", "epsilon_total", "epsilon_normalization",
    "epsilon_their_accountant", "wall_seconds", "reduced", "differences",
)  # fmt: skip


def summarize(values: list[float]) -> tuple[float, float]:
    """(mean, standard deviation over seeds) of finished seeds' accuracies; std as Opacus reports it (np.std,
    ddof = 0: their ± over 10 runs); NaN without values, std 0 for one."""
    if not values:
        return math.nan, math.nan
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()), float(arr.std())


def _pct(value: Any) -> float:
    return math.nan if value is None else round(100.0 * float(value), 3)


def control_frame(profile: str, *, results_root: Any = None, results: Mapping[str, Mapping[str, Any]] | None = None
                  ) -> pd.DataFrame:  # fmt: skip
    """One row per control of ``profile`` (see :data:`CONTROL_COLUMNS`): the published value, spread and citation,
    our per-seed accuracies (``final_pct``: final iterate, ``best_pct``: best evaluation, lists in seed order of the
    finished seeds), their mean and standard deviation (ddof = 0), the seeds planned and done, our ε of what ran
    (the median over finished seeds: ``epsilon_training`` PLD of the training alone, ``epsilon_total`` with the private
    normalisation composed in by RDP, ``epsilon_normalization`` alone, ``epsilon_their_accountant`` Opacus 0.13's RDP
    on Tramèr-Boneh's orders with the normalisation added), and their ε.

    ``results`` (tests): run name -> result dict (``readouts``, ``epsilon``, ``wall_seconds``) instead of the store.
    """
    from dpcore.experiments.registry import get
    from dpcore.experiments.store import Store

    if profile not in ("quick", "paper"):
        raise ValueError(f"profile must be 'quick' or 'paper', got {profile!r}")
    plan = get(EXPERIMENT).runs(profile)
    store = None if results is not None else Store.default(profile, EXPERIMENT, results_root=results_root)
    found: dict[str, Mapping[str, Any]] = {}
    for run in plan:
        res = results.get(run.name) if results is not None else store.load(run.config)  # type: ignore[union-attr]
        if res is not None:
            found[run.name] = res
    planned_keys = dict.fromkeys(run.name.rsplit("/", 1)[0] for run in plan)
    rows = []
    for key in planned_keys:
        c = CONTROLS[key]
        names = [r.name for r in plan if r.name.rsplit("/", 1)[0] == key]
        done = [found[n] for n in names if n in found]
        finals = [_pct((r.get("readouts") or {}).get("final", r.get("final_accuracy"))) for r in done]
        bests = [_pct((r.get("readouts") or {}).get("best", r.get("best_accuracy"))) for r in done]

        def eps(name: str, done: list = done) -> float:
            vals = [(r.get("epsilon") or {}).get(name, {}).get("value") for r in done]
            vals = [math.inf if v == "inf" else float(v) for v in vals if v is not None]
            return float(np.median(vals)) if vals else math.nan

        mean_f, std_f = summarize([v for v in finals if not math.isnan(v)])
        mean_b, std_b = summarize([v for v in bests if not math.isnan(v)])
        p = c.published
        rows.append({
            "key": key, "claim_key": c.claim_key, "data": c.data, "dataset": c.dataset, "model": c.model,
            "pipelines": c.pipelines, "published_pct": p.value, "published_spread_pct": p.spread,
            "published_spread_kind": p.spread_kind, "published_runs": p.runs, "published_readout": p.readout,
            "citation": p.citation, "also_quoted": tuple(c.also_quoted), "their_epsilon": p.epsilon, "delta": p.delta,
            "seeds_planned": len(names), "seeds_done": len(done), "final_pct": finals, "best_pct": bests,
            "mean_final_pct": mean_f, "std_final_pct": std_f, "mean_best_pct": mean_b, "std_best_pct": std_b,
            "epsilon_training": eps("training"), "epsilon_total": eps("total"),
            "epsilon_normalization": eps("normalization"), "epsilon_their_accountant": eps("their_accountant"),
            "wall_seconds": float(sum(float(r.get("wall_seconds") or 0.0) for r in done)),
            "reduced": reduced(profile), "differences": c.differences,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(CONTROL_COLUMNS))


#: :func:`control_table`'s columns: (column of :func:`control_frame`, heading)
_TABLE = (
    ("key", "control"), ("published_pct", "published %"), ("published_spread_pct", "published spread"),
    ("published_runs", "published runs"), ("mean_final_pct", "ours % (mean, final)"),
    ("std_final_pct", "ours spread (std)"), ("seeds_done", "seeds"), ("mean_best_pct", "ours % (best epoch)"),
    ("their_epsilon", "their ε"), ("epsilon_their_accountant", "their accountant on what ran"),
    ("epsilon_total", "our ε (all releases)"), ("epsilon_training", "our ε (training)"),
)  # fmt: skip


def control_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The controls side by side for the report (issue 51's table): published value and spread, ours (mean and
    std over the finished seeds, final iterate; the best epoch beside it), their ε, their accountant on what ran,
    ours; ``frame`` from :func:`control_frame`."""
    missing = [c for c, _ in _TABLE if c not in frame.columns]
    if missing:
        raise ValueError(f"frame must be control_frame(...)'s output; it lacks {missing}")
    return frame[[c for c, _ in _TABLE]].rename(columns=dict(_TABLE))


def control_runs(row: Mapping[str, Any]) -> list[Any]:
    """The finished seeds of one :func:`control_frame` row as :class:`dpcore.verdicts.Run` records (final iterate, the
    primary readout; ε: ours of everything the run released), for deciding the control's own claim."""
    from dpcore.verdicts import Run

    reduced_row = bool(row.get("reduced"))
    eps = float(row["epsilon_total"]) if row.get("epsilon_total") is not None else math.nan
    return [
        Run(
            f"{row['key']}/seed{k}",
            "as published (their command, our trainer and loaders)",
            float(v),
            eps,
            True,
            row.get("differences", "") or "",
            k,
            "reduced" if reduced_row else "full",
            f"results/paper/{EXPERIMENT}/",
        )  # fmt: skip
        for k, v in enumerate(row["final_pct"])
    ]


def self_control(row: Mapping[str, Any]) -> Any:
    """The control of a control's own claim: the published private result run as published *is* the check, so a miss is
    reported plainly as *not reproduced* (a finding about our pipeline: its data copy, sampler, trainer)."""
    from dpcore.verdicts import Control as VerdictControl

    return VerdictControl(row["claim_key"], True, "the control itself (a published result run as published)")


def _eps_text(x: Any) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{float(x):.3g}"


def control_note(row: Mapping[str, Any]) -> str:
    """The note beside a control's verdict: their ε, their accountant on what ran, ours; why it is not run yet."""
    note = (f"their ε {_eps_text(row['their_epsilon'])} (their accountant on what ran: "
            f"{_eps_text(row['epsilon_their_accountant'])}); ours {_eps_text(row['epsilon_total'])}")  # fmt: skip
    if not row["seeds_done"]:
        note += "; not run yet: CPU time not yet spent (results/dry_run/; GPU script benchmarks/gpu_51_controls.sh)"
    return note
