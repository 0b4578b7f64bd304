"""/v0/memory: the facts API for runs (x-agentos-run-token)."""

urlpatterns: list = []
