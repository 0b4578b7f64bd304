"""The three memory tools a model can call: ``search_memory``, ``save_memory``,
``forget_memory`` (OpenAI function tools), confined to the folders the runtime gives.

With one folder the tools take no ``path``; with several, a ``path`` argument whose
values are exactly those folders as the runtime wrote them (``users/{user}/`` stays a
placeholder, so the model never names a user). A refusal is the tool message
``error: <code>: <message>``, never an HTTP error.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from facts import paths, validation
from facts.models import WrittenBy
from facts.paths import Folder
from facts.scope import FactScope, for_run
from facts.services.reading import search_facts
from facts.services.writing import delete_fact, write_fact
from memoryhub import tool_calls
from memoryhub.errors import ApiError
from memoryhub.models import Permission
from memoryhub.principals import Principal
from memoryhub.tools import Argument, Tool, ToolCall, choice, parse_arguments, typed


def _search(
    box: Toolbox, query: str, k: int = validation.K_DEFAULT, path: str | None = None
) -> str:
    folders = box.chosen(path)
    found = search_facts(box.scope, query, folders=folders, k=k)
    return _dumps(
        {
            "facts": [
                {
                    "id": fact.public_id,
                    "text": fact.text,
                    "tags": list(fact.tags),
                    "date": fact.updated_at.date().isoformat(),
                    "score": round(fact.score, 6) if hasattr(fact, "score") else None,
                }
                for fact in found
            ]
        }
    )


def _save(
    box: Toolbox,
    text: str,
    tags: list[str] | None = None,
    replaces: int | None = None,
    path: str | None = None,
) -> str:
    written = write_fact(
        box.principal,
        box.scope,
        path=box.given[0] if path is None else path,
        text=text,
        tags=tags,
        replaces=replaces,
        written_by=WrittenBy.MODEL,
        within=list(box.folders.values()),
    )
    version = written.version
    return _dumps({"saved": f"m_{version.fact_id}", "version": version.version})


def _forget(box: Toolbox, id: str, path: str | None = None) -> str:  # noqa: A002
    delete_fact(box.principal, box.scope, id, within=box.chosen(path))
    return _dumps({"forgotten": id})


# The tools with one folder; with several, each also takes ``path`` (Toolbox.tools).
TOOLS = [
    Tool(
        "search_memory",
        "Search your long-term memory. Every word is matched as a prefix, any word may match; "
        "an empty query lists the newest facts.",
        {
            "query": Argument(validation.QUERY, "words to look for", required=True),
            "k": Argument(
                validation.K, f"how many facts to return (default {validation.K_DEFAULT})"
            ),
        },
        Permission.READ,
        _search,
    ),
    Tool(
        "save_memory",
        "Remember a short fact for later conversations. To correct a fact, pass its id as "
        "replaces.",
        {
            "text": Argument(
                validation.TEXT, "the fact, one short self-contained sentence", required=True
            ),
            "tags": Argument(validation.TAGS.or_null()),
            "replaces": Argument(
                validation.REPLACES.or_null(), "id of a fact this one corrects (m_...)"
            ),
        },
        Permission.RUN,
        _save,
    ),
    Tool(
        "forget_memory",
        "Delete a fact from memory by its id.",
        {"id": Argument(typed("id", "string"), "the fact's id (m_...)", required=True)},
        Permission.RUN,
        _forget,
    ),
]
PATH_DESCRIPTIONS = {  # the path argument with several folders: (description, required)
    "search_memory": ("where to search (default: everywhere)", False),
    "save_memory": ("the folder to save in", True),
    "forget_memory": ("the folder holding the fact", False),
}


class Toolbox:
    """The tools over some folders of one run's memory."""

    def __init__(self, principal: Principal, given: list[str]) -> None:
        """``given``: the folders as the runtime wrote them, normalized (``given_paths``)."""
        self.principal = principal
        self.scope: FactScope = for_run(principal)
        self.given = given
        self.folders: dict[str, Folder] = {
            path: paths.resolve(path, self.scope.viewer) for path in self.given
        }

    def tools(self) -> list[Tool]:
        if len(self.given) == 1:
            return TOOLS
        offered = []
        for tool in TOOLS:
            description, required = PATH_DESCRIPTIONS[tool.name]
            path = choice("path", self.given, description)
            if not required:  # null or left out: every folder of the toolbox
                path = replace(path, rule=path.rule.or_null(), required=False)
            offered.append(replace(tool, arguments={**tool.arguments, "path": path}))
        return offered

    def definitions(self) -> list[dict]:
        return [tool.definition() for tool in self.tools()]

    def chosen(self, path: str | None) -> list[Folder]:
        """The folders a call reaches: the one it names, else all of the toolbox's."""
        return list(self.folders.values()) if path is None else [self.folders[path]]

    # -- calls ---------------------------------------------------------------------------
    def call(self, tool_call: ToolCall) -> dict:
        """Run one tool call; answer the ``{"role": "tool", ...}`` message.

        Each call id runs at most once per run (shared with the run's other tools): the same
        id again answers the first result, with other arguments or paths it is 409.
        """
        self.principal.require(Permission.RUN)  # an ended run's tools are an error, not text
        call_id, name, raw_arguments = tool_call.id, tool_call.name, tool_call.arguments
        try:
            arguments = parse_arguments(raw_arguments)
        except ApiError as error:
            return _message(call_id, error.as_tool_text())  # not recorded: nothing was done
        run = self.principal.run
        assert run is not None  # for_run refused a principal without one (in __init__)
        # The folders are part of the call: with one path they say where save_memory writes.
        # Resolved and sorted, so a retry spelling or ordering them otherwise is the same.
        folders = sorted(folder.path for folder in self.folders.values())
        digest = tool_calls.digest(name, arguments, context=folders)
        found = tool_calls.earlier_content(run, call_id, digest)
        if found is not None:
            return _message(call_id, found)
        tool = {t.name: t for t in self.tools()}.get(name)
        if tool is None:
            return _message(call_id, ApiError(422, f"unknown tool {name!r}").as_tool_text())
        content = tool_calls.at_most_once(
            run,
            call_id,
            name,
            digest,
            lambda: self._execute(tool, arguments),
            transactional=True,  # facts live in the database: the call commits with its work
            arguments=arguments,
        )
        return _message(call_id, content)

    def _execute(self, tool: Tool, arguments: dict) -> str:
        try:
            return tool.handler(self, **tool.check(arguments))  # the offered tool decides
        except ApiError as error:
            return error.as_tool_text()


def _message(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
