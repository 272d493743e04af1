"""The Flower apps of ISRL-DP MB-SGD: :data:`client_app` (one per silo), :data:`server_app` (extra ``scale``).

Flower's Message API (``flwr.clientapp.ClientApp``, ``flwr.serverapp.ServerApp`` with a ``main(grid, context)``),
as the app project ``flower/isrl-insurance/pyproject.toml`` names them (``[tool.flwr.app.components]``):

* :data:`client_app` runs in each SuperNode (or each simulated node): its ``train`` handler is
  :func:`dpcore.federated.flower.silo_train` for the silo of the node's ``partition-id`` (node config), its
  ``query.describe`` handler :func:`dpcore.federated.flower.silo_description`.  The silo's ledger and its own
  records and parameters (:func:`silo`: loaded once from the silo source, then kept) live in ``Context.state``,
  which its SuperNode keeps between messages (each message runs in a fresh ClientApp process).
* :data:`server_app` runs in the SuperLink's ServerApp process: :func:`dpcore.federated.flower.run_server` with the
  plan of the run config's silo source, then the :class:`~dpcore.federated.flower.FederatedResult` (or the error
  that ended the run) is written to the run config's ``out-dir`` (``result.json``) when one is given.

Run config keys (defaults in the app project): ``silo-source`` (:data:`dpcore.federated.flower.SILO_SOURCE`) and
the source's own keys (``num-silos``, ``silos-per-round``, ``rounds``, ``epsilon``, ``seed`` for the insurance
silos), ``connect-timeout`` and ``round-timeout`` (seconds), ``out-dir``.  This module imports ``flwr`` at import
time: only Flower loads it.
"""

from __future__ import annotations

from functools import partial
from logging import INFO

from flwr.app import Context, Message
from flwr.clientapp import ClientApp
from flwr.common import log
from flwr.serverapp import Grid, ServerApp

from dpcore.federated import flower as fl

__all__ = ["client_app", "server_app", "silo"]

#: One silo: its SuperNode's ``partition-id`` picks it from the run config's silo source.
client_app = ClientApp()
#: The server: waits for the silos, runs R rounds, writes the result to ``out-dir``.
server_app = ServerApp()


def silo(context: Context) -> tuple[fl.SiloSpec, int]:
    """This node's silo and the run seed: kept in ``context.state`` after the first message
    (:func:`dpcore.federated.flower.keep_silo`), loaded from the run config's silo source for the node's
    ``partition-id`` before that."""
    kept = fl.kept_silo(context.state)
    if kept is not None:
        return kept
    spec, plan = fl.silo_of(context.node_config, context.run_config)
    fl.keep_silo(context.state, spec, plan.seed)
    return spec, plan.seed


@client_app.train()
def train(msg: Message, context: Context) -> Message:
    """Silo ``partition-id``'s noised update for the round asked (:func:`dpcore.federated.flower.silo_train`)."""
    spec, seed = silo(context)
    return Message(fl.silo_train(spec, seed, msg.content, context.state), reply_to=msg)


@client_app.query("describe")
def describe(msg: Message, context: Context) -> Message:
    """Which silo this node holds, and its run record (:func:`dpcore.federated.flower.silo_description`)."""
    spec, _seed = silo(context)
    return Message(fl.silo_description(spec), reply_to=msg)


@server_app.main()
def main(grid: Grid, context: Context) -> None:
    """Run the federation of the run config; write its result (or its error) to ``out-dir`` when given."""
    config = dict(context.run_config)
    out_dir = str(config.get("out-dir", "") or "")
    try:
        _silos, plan = fl.load_federation(config)
        result = fl.run_server(
            grid, plan, connect_timeout=float(config.get("connect-timeout", fl.CONNECT_TIMEOUT_S)),
            round_timeout=float(config.get("round-timeout", fl.ROUND_TIMEOUT_S)), log=partial(log, INFO),
        )  # fmt: skip
    except Exception as err:  # reported to whoever reads out-dir, then the run fails with it
        if out_dir:
            fl.write_result(out_dir, err)
        raise
    if out_dir:
        fl.write_result(out_dir, result)
    for silo, rec in sorted(result.spent_records().items()):
        log(INFO, "silo %d: asked in %d rounds, used in %d (run record: %d rounds)", silo, rec.steps,
                     len(result.used(silo)), result.records[(0, silo)].steps)  # fmt: skip
