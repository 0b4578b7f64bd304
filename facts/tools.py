"""The three memory tools a model can call: ``search_memory``, ``save_memory``,
``forget_memory`` (OpenAI function tools), confined to the folders the runtime gives.

With one folder the tools take no ``path``; with several, a ``path`` argument whose
values are exactly those folders as the runtime wrote them (``users/{user}/`` stays a
placeholder, so the model never names a user). A refusal is the tool message
``error: <code>: <message>``, never an HTTP error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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
from memoryhub.tools import ToolCall, parse_arguments


class Toolbox:
    """The tools over some folders of one run's memory."""

    def __init__(self, principal: Principal, given: list[str]) -> None:
        """``given``: the folders as the runtime wrote them, normalized (``given_paths``)."""
        self.principal = principal
        self.scope: FactScope = for_run(principal)
        self.given = given
        self.folders: dict[str, Folder] = {
            given: paths.resolve(given, self.scope.viewer) for given in self.given
        }

    # -- definitions -------------------------------------------------------------------
    def definitions(self) -> list[dict]:
        return [
            _function(
                "search_memory",
                "Search your long-term memory. Every word is matched as a prefix, any word "
                "may match; an empty query lists the newest facts.",
                {
                    "query": {"type": "string", "description": "words to look for"},
                    "k": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": validation.K_MAX,
                        "description": "how many facts to return (default 5)",
                    },
                    **self._path_property("where to search (default: everywhere)"),
                },
                ["query"],
            ),
            _function(
                "save_memory",
                "Remember a short fact for later conversations. To correct a fact, pass its "
                "id as replaces.",
                {
                    "text": {
                        "type": "string",
                        "maxLength": validation.MAX_TEXT,
                        "description": "the fact, one short self-contained sentence",
                    },
                    "tags": {
                        "type": "array",
                        "maxItems": validation.MAX_TAGS,
                        "items": {"type": "string", "pattern": f"^{validation.TAG_RE.pattern}$"},
                    },
                    "replaces": {
                        "type": "string",
                        "description": "id of a fact this one corrects (m_...)",
                    },
                    **self._path_property("the folder to save in"),
                },
                ["text", "path"] if self._several else ["text"],
            ),
            _function(
                "forget_memory",
                "Delete a fact from memory by its id.",
                {
                    "id": {"type": "string", "description": "the fact's id (m_...)"},
                    **self._path_property("the folder holding the fact"),
                },
                ["id"],
            ),
        ]

    @property
    def _several(self) -> bool:
        return len(self.given) > 1

    def _path_property(self, description: str) -> dict:
        if not self._several:
            return {}
        return {"path": {"type": "string", "enum": list(self.given), "description": description}}

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
        # The folders are part of the call: with one path they say where save_memory writes.
        # Resolved and sorted, so a retry spelling or ordering them otherwise is the same.
        folders = sorted(folder.path for folder in self.folders.values())
        digest = tool_calls.digest(name, arguments, context=folders)
        found = tool_calls.earlier_content(run, call_id, digest)
        if found is not None:
            return _message(call_id, found)
        definition = {d["function"]["name"]: d for d in self.definitions()}.get(name)
        if definition is None:
            return _message(call_id, ApiError(422, f"unknown tool {name!r}").as_tool_text())
        content = tool_calls.at_most_once(
            run,
            call_id,
            name,
            digest,
            lambda: self._execute(definition, name, arguments),
            transactional=True,  # facts live in the database: the call commits with its work
        )
        return _message(call_id, content)

    def _execute(self, definition: dict, name: str, arguments: dict) -> str:
        try:
            tool_calls.check_declared(definition, arguments)  # the offered definition decides
            return self._handlers()[name](arguments)
        except ApiError as error:
            return error.as_tool_text()

    def _handlers(self) -> dict[str, Callable[[dict], str]]:
        return {
            "search_memory": self._search,
            "save_memory": self._save,
            "forget_memory": self._forget,
        }

    def _search(self, args: dict) -> str:
        query = validation.QUERY(args.get("query"))
        folders = self._chosen(args, required=False)
        found = search_facts(self.scope, query, folders=folders, k=validation.K(args.get("k")))
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

    def _save(self, args: dict) -> str:
        if "text" not in args:
            raise ApiError(422, "text is required")
        written = write_fact(
            self.principal,
            self.scope,
            path=self._chosen_given(args),
            text=validation.TEXT(args["text"]),
            tags=validation.TAGS.or_null()(args.get("tags")),
            replaces=validation.REPLACES.or_null()(args.get("replaces")),
            written_by=WrittenBy.MODEL,
            within=list(self.folders.values()),
        )
        version = written.version
        return _dumps({"saved": f"m_{version.fact_id}", "version": version.version})

    def _forget(self, args: dict) -> str:
        fact_id = args.get("id")
        if not isinstance(fact_id, str):
            raise ApiError(422, "id is required")
        delete_fact(self.principal, self.scope, fact_id, within=self._chosen(args, required=False))
        return _dumps({"forgotten": fact_id})

    def _chosen_given(self, args: dict) -> str:
        if not self._several:
            return self.given[0]
        path = args.get("path")
        if path not in self.given:
            raise ApiError(422, f"path must be one of: {', '.join(self.given)}")
        return path

    def _chosen(self, args: dict, *, required: bool) -> list[Folder]:
        if not self._several or (not required and args.get("path") is None):
            return list(self.folders.values())
        return [self.folders[self._chosen_given(args)]]


def _function(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def _message(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
