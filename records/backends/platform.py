"""The hosted mem0 Platform (``mem0_platform``): ``Authorization: Token``, paths end with /."""

from __future__ import annotations

from records.backends.base import Page, Record, RecordBackend, canonical_record_id

DEFAULT_BASE_URL = "https://api.mem0.ai"
PAGE_SIZE_MAX = 200  # the Platform's page_size is 1-200


class PlatformBackend(RecordBackend):
    type = "mem0_platform"
    add_path = "/v3/memories/add/"
    record_path = "/v1/memories/{id}/"
    search_path = "/v3/memories/search/"

    def headers(self, *, admin: bool = False) -> dict[str, str]:
        return {"Authorization": f"Token {self.credential.get('api_key', '')}"}

    def _page(self, namespace: str, page: int, page_size: int) -> tuple[list[Record], int] | None:
        answer = self.request(
            "POST",
            "/v3/memories/",
            params={"page": page, "page_size": page_size},
            json={"filters": {"user_id": namespace}},
        )
        if answer.status == 404:
            return None  # a page past the end
        if answer.status >= 300 or not isinstance(answer.data, dict):
            raise self.malformed()
        count = answer.data.get("count")
        if not isinstance(count, int):
            raise self.malformed()
        return [self.record_of(item) for item in self.results_of(answer)], count

    def list(self, namespace: str, *, limit: int, offset: int) -> Page:
        size = min(max(limit, 1), PAGE_SIZE_MAX)
        first = offset // size + 1
        records: list[Record] = []
        count = 0
        # The window [offset, offset + limit) spans at most two Platform pages.
        for page in (first, first + 1):
            got = self._page(namespace, page, size)
            if got is None:
                break
            records.extend(got[0])
            count = got[1]
            if (page * size) >= offset + limit or (page * size) >= count:
                break
        if not records and offset > 0:
            count = (self._page(namespace, 1, 1) or ([], 0))[1]
        start = offset - (first - 1) * size
        return Page(records[start : start + limit], count)

    def get(self, namespace: str, record_id: str) -> Record | None:
        canonical = canonical_record_id(record_id)
        if canonical is None:
            return None
        answer = self.request("GET", f"/v1/memories/{canonical}/")
        if answer.status in (400, 404):
            return None
        return self.in_namespace(self.record_of(answer.data), namespace)

    def update(
        self, namespace: str, record_id: str, *, text: str | None, metadata: dict | None
    ) -> Record:
        existing = self._existing(namespace, record_id).id
        body: dict = {}
        if text is not None:
            body["text"] = text
        if metadata is not None:
            body["metadata"] = metadata
        answer = self.request("PUT", f"/v1/memories/{existing}/", write=True, json=body)
        if answer.status == 404:
            raise self.not_found()
        if answer.status >= 300:
            raise self.unavailable(f"it refused the change (HTTP {answer.status})")
        record = self.record_of(answer.data, write=True)
        record.namespace = record.namespace or namespace
        return record

    def delete_namespace(self, namespace: str) -> None:
        # Accepted and queued: the Platform finishes the deletion on its own.
        answer = self.request(
            "DELETE", "/v1/memories/", params={"user_id": namespace}, write=True, admin=True
        )
        if answer.status == 400:
            raise self.unavailable("it refused the purge (HTTP 400)")
