"""Routes that make or start something answer through one created() reply: status, JSON body, Location."""

from __future__ import annotations

from app.api.routing import created


def test_created_replies_with_the_status_the_body_and_the_address(app):
    with app.test_request_context():
        made = created({"id": 3}, "/api/v1/lookups/3")
        started = created({"id": 4, "state": "queued"}, "/api/v1/bench-runs/4", status=202)
        unaddressed = created({"token": "t"})
    assert (made.status_code, made.get_json()) == (201, {"id": 3})
    assert made.headers["Location"] == "/api/v1/lookups/3"
    assert (started.status_code, started.headers["Location"]) == (202, "/api/v1/bench-runs/4")
    assert unaddressed.status_code == 201 and "Location" not in unaddressed.headers
