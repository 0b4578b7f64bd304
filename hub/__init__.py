"""hub: the layer above the apps, where they meet.

The kernel (``memoryhub``) imports no app and each app imports only the kernel (``threads``
also ``facts``); what spans them lives here: the site's URLs and ASGI entry, the MCP server,
export and import, and the commands that read several apps. Nothing imports ``hub``
(the contracts in pyproject.toml keep it so).
"""
