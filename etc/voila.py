"""Voilà configuration of ``make explore`` and of the browser tests (loaded with ``--Voila.config_file_paths=etc``,
:data:`dpcore.explore.dashboard.VOILA_OPTIONS`): leaving or closing an explorer's page shuts its kernel down.

* ``prelaunch_hook``: :func:`dpcore.explore.dashboard.set_xsrf_cookie` sets the ``_xsrf`` cookie on the notebook
  page, so that the page's ``beforeunload`` shutdown beacon passes the server's XSRF check (without it: 403, and the
  kernel stayed alive until the server stopped).
* the culler: a kernel with no connected page for :data:`dpcore.explore.dashboard.CULL_IDLE_SECONDS` (a browser that
  died without sending the beacon) is shut down; checked every minute.
"""

from dpcore.explore.dashboard import CULL_IDLE_SECONDS, set_xsrf_cookie

c = get_config()  # noqa: F821  (provided by Voilà when it loads this file)
c.VoilaConfiguration.prelaunch_hook = set_xsrf_cookie
c.MappingKernelManager.cull_idle_timeout = CULL_IDLE_SECONDS
c.MappingKernelManager.cull_interval = 60
c.MappingKernelManager.cull_connected = False
