"""``python -m dpcore.runner``: :func:`dpcore.runner.main` (see :mod:`dpcore.runner`)."""

from dpcore.runner import main

raise SystemExit(main())
