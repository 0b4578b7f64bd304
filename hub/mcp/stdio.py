"""``memoryhub-mcp``: the MCP server over stdio, for desktop and IDE clients.

The credentials are the command's options (or their environment variables), never a tool's
arguments. The process runs memoryhub's code against its database (``DATABASE_URL`` and the
other settings as for the server), so it needs to reach that database; with none of them
set, it uses ``make run``'s embedded one, as ``manage.py`` does.

    memoryhub-mcp --api-key mh_... --agent agt_... --end-user ada
    memoryhub-mcp --run-token rt_...
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
import django

from memoryhub.embedded import beside_make_run

OPTIONS = {  # option -> (environment variable, help)
    "run_token": ("MEMORYHUB_RUN_TOKEN", "a run's token: the tools are that run's"),
    "api_key": ("MEMORYHUB_API_KEY", "an API key with run: opens a run for this session"),
    "agent": ("MEMORYHUB_AGENT", "the agent's id (with --api-key)"),
    "end_user": ("MEMORYHUB_END_USER", "your id as the agent's end user (with --api-key)"),
    "paths": ("MEMORYHUB_PATHS", "comma-separated folders for the facts tools"),
}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="memoryhub-mcp", description=__doc__.split("\n")[0])
    for name, (variable, text) in OPTIONS.items():
        parser.add_argument(
            "--" + name.replace("_", "-"),
            default=os.environ.get(variable, ""),
            help=f"{text} (env {variable})",
        )
    return parser.parse_args(argv)


async def serve(arguments: argparse.Namespace) -> None:
    from mcp.server.stdio import stdio_server

    from hub.mcp.server import build_server, in_thread, open_in_thread, split_paths
    from hub.mcp.session import Credentials, McpSession, close_session

    credentials = Credentials(
        run_token=arguments.run_token,
        api_key=arguments.api_key,
        agent=arguments.agent,
        end_user=arguments.end_user,
        paths=split_paths(arguments.paths),
    )
    # One session for the process, opened by the first request (so that a refusal reaches
    # the client as an MCP error) and its run ended when the client closes the pipe.
    opened: list[McpSession] = []
    lock = anyio.Lock()

    async def session_of(ctx: object) -> McpSession:
        async with lock:
            if not opened:
                opened.append(await open_in_thread(credentials))
        return opened[0]

    server = build_server(session_of)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        with anyio.CancelScope(shield=True):
            for session in opened:
                await in_thread(close_session, session)


def main(argv: list[str] | None = None) -> int:
    arguments = parse(argv)
    if beside_make_run(os.environ):  # as manage.py does: a desktop client beside make run
        print(
            "memoryhub-mcp: development settings, make run's database in .data/pg", file=sys.stderr
        )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    django.setup()
    anyio.run(serve, arguments)
    return 0


if __name__ == "__main__":
    sys.exit(main())
