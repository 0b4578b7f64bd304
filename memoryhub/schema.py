"""OpenAPI details drf-spectacular cannot guess: our two credentials, list operation ids."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "memoryhub.auth.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema) -> dict:
        return {"type": "http", "scheme": "bearer", "description": "A workspace API key"}


class RunTokenScheme(OpenApiAuthenticationExtension):
    target_class = "memoryhub.auth.RunTokenAuthentication"
    name = "runToken"

    def get_security_definition(self, auto_schema) -> dict:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "x-agentos-run-token",
            "description": "The token a run got when it was accepted",
        }


class AutoSchema(SpectacularAutoSchema):
    def get_operation_id(self) -> str:
        # Plain APIViews are all "retrieve"; a GET on a collection lists.
        operation_id = super().get_operation_id()
        if self.method == "GET" and not self.path.rstrip("/").endswith("}"):
            operation_id = operation_id.replace("_retrieve", "_list")
        return operation_id
