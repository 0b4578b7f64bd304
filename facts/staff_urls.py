"""/api/v1/agents/{agent_id}/facts: the staff API over an agent's facts (API keys)."""

urlpatterns: list = []
