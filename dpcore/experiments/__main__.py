"""``python -m dpcore.experiments run|list ...`` (see :mod:`dpcore.experiments.cli`)."""

from dpcore.experiments.cli import main

raise SystemExit(main())
