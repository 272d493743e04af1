"""Paper 001's insurance experiment (Lowy & Razaviyayn, ICLR 2023, Fig. 5, App. I.2) on Flower.

The silos of :func:`dpcore.federated.datasets.insurance_by_charges` with App. I's noise calibration
(:func:`dpcore.papers.p001_isrl.accounting.noise_std`), run by :mod:`dpcore.federated.flower` (Flower's Message
API) from the app project ``flower/isrl-insurance/``, whose silo source is :func:`silos_from_config`.  On this
machine, under Flower's simulation runtime or as a SuperLink and one SuperNode per silo on 127.0.0.1
(:mod:`dpcore.federated.flower_loopback`)::

    python -m dpcore.papers.p001_isrl.flower_insurance deployment --rounds 5 --out model.npy --records records.json
    python -m dpcore.papers.p001_isrl.flower_insurance simulation --rounds 5

(across machines: ``flower-superlink`` / ``flower-supernode`` / ``flwr run``, see the README).  Each silo sends its
run record (:func:`dpcore.federated.flower.silo_record`) before round 1 and with every update;
:func:`silo_epsilon` turns one into ε with paper 001's tight accountant for MB-SGD's draws with replacement
(:func:`dpcore.papers.p001_isrl.accounting.mbsgd_epsilon`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.accounting.run_record import RunRecord
from dpcore.federated import datasets as fd
from dpcore.federated.flower import IsrlPlan, SiloSpec
from dpcore.papers.p001_isrl import accounting as isrl

__all__ = ["insurance_setup", "silos_from_config", "silo_epsilon", "write_records", "main"]


def insurance_setup(
    frame, *, num_silos: int = 3, silos_per_round: int = 3, rounds: int = 5, epsilon: float = 1.0,
    clip: float = 1.0, stepsize: float | None = None, trial_seed: int = 3, seed: int = 0, window: int = 8,
    source: str = "insurance",
) -> tuple[list[SiloSpec], IsrlPlan]:  # fmt: skip
    """The insurance experiment of Fig. 5 (App. I.2): silos by level of charges, σ_i of App. I at ``epsilon``.

    Returns the silos of trial 0 (split with ``trial_seed``) and the server's plan; K_i follows App. I's
    rule at ε = 3 (as :func:`dpcore.papers.p001_isrl.panels.insurance_panel`), δ_i = 1/n_i².  ``source``
    names ``frame`` (e.g. :func:`dpcore.data.provenance`); the silos' run records carry it with the split.
    """
    trials = fd.insurance_by_charges(frame, num_silos=num_silos, trials=1, seed=trial_seed)
    sizes = trials.sizes[0]
    data = f"{source}; {num_silos} silos by level of charges, each silo's training split (split seed {trial_seed})"
    silos = []
    for i in range(num_silos):
        n = int(sizes[i])
        k = isrl.batch_size_experiments(n, rounds, 3.0)
        sigma = isrl.noise_std(lipschitz=clip, rounds=rounds, n=n, batch_size=k, epsilon=epsilon, delta=1.0 / n**2)
        x, y = trials.silo_train(0, i)
        silos.append(SiloSpec(i, np.asarray(x, np.float32), np.asarray(y, np.float32), trials.loss, trials.num_outputs,
                              int(k), float(sigma), int(rounds), float(clip), data=data))  # fmt: skip
    eta = stepsize if stepsize is not None else silos_per_round * math.exp(-4)
    plan = IsrlPlan(rounds, silos_per_round, eta, num_silos, trials.num_outputs, trials.dim, seed, window)
    return silos, plan


def silos_from_config(config: Mapping[str, Any]) -> tuple[list[SiloSpec], IsrlPlan]:
    """The silo source of the app project ``flower/isrl-insurance/`` (run config ``silo-source``): the silos and plan
    of :func:`insurance_setup` on the insurance data (:func:`dpcore.data.load_insurance`) for the run config's
    ``num-silos``, ``silos-per-round``, ``rounds``, ``epsilon`` and ``seed`` (defaults 3, 3, 5, 1.0, 0)."""
    from dpcore.data import load_insurance, provenance

    return insurance_setup(
        load_insurance(), num_silos=int(config.get("num-silos", 3)),
        silos_per_round=int(config.get("silos-per-round", 3)), rounds=int(config.get("rounds", 5)),
        epsilon=float(config.get("epsilon", 1.0)), seed=int(config.get("seed", 0)), source=provenance("insurance"),
    )  # fmt: skip


def silo_epsilon(record: RunRecord, delta: float) -> float:
    """ε at ``delta`` of one silo's MB-SGD run record (Lowy & Razaviyayn, Algorithm 2; replace-one neighbours).

    The record's noise is K·σ on the sum of K clipped terms, i.e. σ on their mean; the tight PLD of draws with
    replacement (:func:`dpcore.papers.p001_isrl.accounting.mbsgd_epsilon`) composed over the record's steps.
    """
    if not isinstance(record, RunRecord) or record.sampling != "replacement" or not isinstance(record.batch_size, int):
        raise ValueError(f"record must be an MB-SGD silo RunRecord (sampling 'replacement', one batch), got {record!r}")
    return isrl.mbsgd_epsilon(
        noise_std=record.noise_std / record.batch_size, lipschitz=record.clip_norm, batch_size=record.batch_size,
        n=record.dataset_size, rounds=record.steps, delta=delta,
    )  # fmt: skip


def write_records(path: str | Path, records: Mapping[tuple[int, int], RunRecord]) -> Path:
    """Write ``{(0, silo): RunRecord}`` as JSON ``{"silo <i>": record, ...}`` (with each silo's ε at δ = 1/n²)."""
    out = {}
    for (_config, silo), rec in sorted(records.items()):
        out[f"silo {silo}"] = {**rec.to_dict(), "epsilon_at_delta_1_over_n2": silo_epsilon(rec, rec.dataset_size**-2)}
    path = Path(path)
    path.write_text(json.dumps(out, indent=1) + "\n")
    return path


# --------------------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m dpcore.papers.p001_isrl.flower_insurance",
                                description="ISRL-DP insurance silos (Fig. 5) on Flower, on this machine.")  # fmt: skip
    p.add_argument("runtime", choices=("deployment", "simulation"),
                   help="deployment: a SuperLink and one SuperNode per silo as processes on 127.0.0.1; "
                        "simulation: Flower's simulation runtime")  # fmt: skip
    p.add_argument("--num-silos", type=int, default=3)
    p.add_argument("--silos-per-round", type=int, default=3)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workdir", default=None, help="Flower homes, logs and results (default: a temporary folder)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole run")
    p.add_argument("--out", default=None, help="write the final model here (.npy)")
    p.add_argument("--records", default=None, help="write the silos' run records here (.json)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the federation on this machine; print the model and, per silo, n, K, R and ε at δ = 1/n²."""
    import tempfile

    from dpcore.federated import flower_loopback

    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    config = {"silos-per-round": args.silos_per_round, "rounds": args.rounds, "epsilon": args.epsilon,
              "seed": args.seed}  # fmt: skip
    run = flower_loopback.deploy if args.runtime == "deployment" else flower_loopback.simulate
    with tempfile.TemporaryDirectory(prefix="dpcore-flower-") as tmp:
        result = run(config, num_silos=args.num_silos, workdir=args.workdir or tmp, timeout_s=args.timeout)
    w, records = result.model, result.records
    if args.out:
        np.save(args.out, w)
    if args.records:
        write_records(args.records, records)
    print(np.array2string(w, precision=6))
    for (_c, silo), rec in sorted(records.items()):
        eps = silo_epsilon(rec, rec.dataset_size**-2)
        print(f"silo {silo}: n={rec.dataset_size} K={rec.batch_size} R={rec.steps} ε={eps:.4f} at δ=1/n², "
              f"used in rounds {result.used(silo)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
