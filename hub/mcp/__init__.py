"""memoryhub's MCP server: the run's memory tools and resources for any MCP client.

``server`` builds it with the SDK, ``session`` decides the run from the credentials,
``adapter`` calls the services REST calls; ``http`` serves it at ``/mcp`` (see
``hub.asgi``) and ``stdio`` through the ``memoryhub-mcp`` command.
"""
