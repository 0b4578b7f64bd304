def test_agent_roundtrip(owner):
    r = owner.post("/api/v1/agents", {"name": "Bot"})
    assert r.status_code == 201, r.content
    assert r["ETag"] == '"1"'
    agent_id = r.json()["id"]
    assert agent_id.startswith("agt_")
    r = owner.get(f"/api/v1/agents/{agent_id}")
    assert r.status_code == 200
