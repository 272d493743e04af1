"""Federated learning without a trusted server (Lowy & Razaviyayn, ICLR 2023; paper 001).

* :mod:`dpcore.federated.models`      -- logistic / squared / softmax losses of linear models.
* :mod:`dpcore.federated.silos`       -- :class:`SiloPool`: private records; answers only with noised messages.
* :mod:`dpcore.federated.algorithms`  -- server side: ISRL-DP MB-SGD (Alg. 2), ISRL-DP Local SGD (App. I),
  one-pass accelerated MB-SGD (Alg. 1), shuffled MB-SGD (Sec. 5); batched over seeds × configurations.
* :mod:`dpcore.federated.datasets`    -- MNIST odd/even, insurance and obesity silo partitions (App. I).
* :mod:`dpcore.federated.flower`      -- the silos and the server on Flower's Message API (extra ``scale``);
  :mod:`dpcore.federated.flower_app` its ``ClientApp`` / ``ServerApp``, :mod:`dpcore.federated.flower_loopback`
  a SuperLink and SuperNodes on 127.0.0.1 and ``flwr run`` (simulation and deployment runtimes).
* the App. I tuning protocol of Lowy & Razaviyayn lives in :mod:`dpcore.papers.p001_isrl.experiments`.

Noise calibrations and the tight accountant are in :mod:`dpcore.papers.p001_isrl.accounting`.
"""

from dpcore.federated.algorithms import Shuffler, accelerated_mb_sgd, local_sgd, mb_sgd, shuffled_mb_sgd
from dpcore.federated.models import LogisticLoss, SoftmaxLoss, SquaredLoss, make_loss
from dpcore.federated.silos import SiloPool

__all__ = [
    "SiloPool",
    "Shuffler",
    "mb_sgd",
    "local_sgd",
    "accelerated_mb_sgd",
    "shuffled_mb_sgd",
    "LogisticLoss",
    "SquaredLoss",
    "SoftmaxLoss",
    "make_loss",
]
