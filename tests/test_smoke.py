def test_smoke(service, http_on_ddb_local):
    from core.model import NewMemory

    m = service.create("default", NewMemory.parse({"content": "x"}))
    assert m.id == 1
    r = http_on_ddb_local.post("/memories", json={"content": "hello"})
    assert r.status_code == 201, r.text
