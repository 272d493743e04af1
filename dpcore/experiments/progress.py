"""Progress of one run: a tqdm bar when stderr is a terminal, else one log line per epoch."""

from __future__ import annotations

import sys
import time
from typing import IO

from dpcore.validation import check_positive_int

__all__ = ["Progress", "format_seconds", "PROGRESS_MODES"]

PROGRESS_MODES = ("auto", "bar", "log", "none")


def format_seconds(seconds: float) -> str:
    """``"42s"``, ``"3m07s"``, ``"2h05m"``, ``"3d04h"``.

    >>> format_seconds(42.4), format_seconds(187), format_seconds(7500), format_seconds(3.2 * 86400)
    ('42s', '3m07s', '2h05m', '3d04h')
    """
    s = int(round(max(seconds, 0.0)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600:02d}h"


class Progress:
    """Reports steps and epochs of a run of ``total_steps`` rounds that starts at ``start_step``."""

    def __init__(
        self,
        name: str,
        total_steps: int,
        start_step: int,
        epochs: int,
        *,
        mode: str = "auto",
        stream: IO[str] | None = None,
        metric: str = "test",
        evals_per_epoch: int = 1,
    ) -> None:
        if mode not in PROGRESS_MODES:
            raise ValueError(f"mode must be one of {', '.join(map(repr, PROGRESS_MODES))}; got {mode!r}")
        self.stream = stream if stream is not None else sys.stderr
        if mode == "auto":
            mode = "bar" if hasattr(self.stream, "isatty") and self.stream.isatty() else "log"
        self.mode, self.name, self.total, self.epochs, self.metric = mode, name, total_steps, epochs, metric
        self.start_step, self.steps = start_step, start_step
        self.evals_per_epoch = check_positive_int("evals_per_epoch", evals_per_epoch)
        self.t0 = time.perf_counter()
        self.bar = None
        if mode == "bar":
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total_steps, initial=start_step, desc=name, file=self.stream, leave=False)

    def step(self) -> None:
        self.steps += 1
        if self.bar is not None:
            self.bar.update(1)

    def epoch(self, index: int, entry: dict[str, float], elapsed_total: float) -> None:
        acc = entry.get(f"{self.metric}_accuracy", float("nan"))
        loss = entry.get(f"{self.metric}_loss", float("nan"))
        if self.bar is not None:
            self.bar.set_postfix(epoch=index, acc=f"{acc:.4f}", loss=f"{loss:.4f}")
            return
        if self.mode != "log":
            return
        done = self.steps - self.start_step
        rate = (time.perf_counter() - self.t0) / done if done else float("nan")
        eta = rate * (self.total - self.steps) if done else float("nan")
        eta_text = format_seconds(eta) if eta == eta else "?"
        where = f"epoch {index}/{self.epochs}"
        if self.evals_per_epoch > 1:  # several evaluations per epoch: say which epoch fraction the model has seen
            where = f"epoch {entry.get('epoch', index / self.evals_per_epoch):.2f}/{self.epochs} (evaluation {index})"
        print(
            f"{self.name}: {where} {self.metric} acc {acc:.4f} loss {loss:.4f} "
            f"elapsed {format_seconds(elapsed_total)} ETA {eta_text}",
            file=self.stream,
            flush=True,
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
