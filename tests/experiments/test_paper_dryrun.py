"""`make test` dry-runs the paper profile of every registered training experiment (1 round per cost key).

This catches a typo in a grid, a shape error or a configuration the trainer refuses long before a GPU
is rented.  Data files that are missing are replaced by random data of the same shape (said in the output).
One round per cost key (``steps=1``; the CLI's default 2 times a warm second round) at a probe batch of
:data:`PROBE_BATCH` (the CLI's 1,024): every configuration is still built, one per cost key stepped, and the test
checks the plan, not the estimate; the evaluation is timed on as many examples (paper 002's ResNet-20 and
ScatterNet probes took 16 s a round at 1,024 on one thread).
"""

from __future__ import annotations

import io

import pytest
import torch

from dpcore.experiments import dry_run, registry

torch.set_num_threads(1)
#: examples per timed round of a run whose batch is larger (the estimate is scaled linearly from it)
PROBE_BATCH = 64


@pytest.mark.slow
@pytest.mark.parametrize("name", registry.names())
def test_paper_profile_dry_run(name, tmp_path):
    exp = registry.get(name)
    if "paper" not in exp.profiles:
        pytest.skip(f"{name} has no paper profile")
    stream = io.StringIO()
    rows = dry_run(name, "paper", steps=1, results_root=tmp_path / "results", checkpoints_root=tmp_path / "ck",
                   stream=stream, probe_batch=PROBE_BATCH, eval_probe=PROBE_BATCH)
    print(stream.getvalue())
    assert rows and all(r.steps > 0 and r.step_seconds > 0 and r.estimate_seconds > 0 for r in rows)
    assert "total estimate" in stream.getvalue()
