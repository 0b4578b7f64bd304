"""What the tests and the bench both use, outside the shipped packages: the fake mem0
servers (``support.fakes``), starting and stopping real processes (``support.workers``),
the production servers (``support.servers``: gunicorn's command, nginx with the shipped
configuration) and the dependencies a fault run stops and starts (``support.outages``).

The bench imports no test module; both import from here."""
