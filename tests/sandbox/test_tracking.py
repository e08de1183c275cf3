"""Shipment Tracking v1 against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api, approve, issues

BATCH = "/v1/shipping/trackers-batch"
TRACKERS = "/v1/shipping/trackers"


def capture(api: Api) -> str:
    body = {
        "intent": "CAPTURE",
        "purchase_units": [{"amount": {"currency_code": "USD", "value": "20.00"}}],
    }
    order = api.post("/v2/checkout/orders", body).json()
    approve(api, order["id"])
    done = api.post(f"/v2/checkout/orders/{order['id']}/capture").json()
    capture_id: str = done["purchase_units"][0]["payments"]["captures"][0]["id"]
    return capture_id


def tracker(transaction_id: str, number: str | None = "1Z999AA10123456784", **extra: Any) -> dict:
    item: dict[str, Any] = {"transaction_id": transaction_id, "status": "SHIPPED", **extra}
    if number is not None:
        item.setdefault("carrier", "UPS")
        item["tracking_number"] = number
    return item


def test_a_batch_adds_trackers_that_can_then_be_shown(api: Api) -> None:
    capture_id = capture(api)
    body = {
        "trackers": [
            tracker(capture_id, shipment_date="2026-11-20", notify_buyer=True),
            tracker(capture_id, "9400111899223", carrier="USPS"),
        ]
    }
    response = api.post(BATCH, body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert "errors" not in result
    identifiers = result["tracker_identifiers"]
    assert [i["tracking_number"] for i in identifiers] == ["1Z999AA10123456784", "9400111899223"]
    self_link = next(link for link in identifiers[0]["links"] if link["rel"] == "self")
    assert self_link["href"].endswith(f"{TRACKERS}/{capture_id}-1Z999AA10123456784")
    shown = api.get(f"{TRACKERS}/{capture_id}-1Z999AA10123456784")
    assert shown.status_code == 200
    found = shown.json()
    assert found["transaction_id"] == capture_id
    assert found["status"] == "SHIPPED"
    assert found["carrier"] == "UPS"
    assert found["shipment_date"] == "2026-11-20"
    assert found["notify_buyer"] is True
    assert found["last_updated_time"] == "2026-11-21T12:00:00Z"
    listed = api.get(TRACKERS, params={"transaction_id": capture_id}).json()
    assert len(listed["trackers"]) == 2
    only = api.get(
        TRACKERS, params={"transaction_id": capture_id, "tracking_number": "9400111899223"}
    )
    assert [t["carrier"] for t in only.json()["trackers"]] == ["USPS"]


def test_a_batch_of_more_than_twenty_trackers_is_rejected_whole(api: Api) -> None:
    capture_id = capture(api)
    body = {"trackers": [tracker(capture_id, f"N{i:04d}") for i in range(21)]}
    response = api.post(BATCH, body)
    assert response.status_code == 400
    assert issues(response) == ["INVALID_ARRAY_MAX_ITEMS"]
    assert api.get(f"{TRACKERS}/{capture_id}-N0000").status_code == 404


def test_a_batch_with_one_bad_transaction_stores_the_good_ones(api: Api) -> None:
    capture_id = capture(api)
    body = {"trackers": [tracker("UNKNOWNCAPTURE123", "A1"), tracker(capture_id, "B2")]}
    response = api.post(BATCH, body)
    assert response.status_code == 200
    result = response.json()
    assert [i["transaction_id"] for i in result["tracker_identifiers"]] == [capture_id]
    [error] = result["errors"]
    assert error["name"] == "RESOURCE_NOT_FOUND"
    assert error["debug_id"]
    assert error["details"][0]["issue"] == "INVALID_RESOURCE_ID"
    assert error["details"][0]["field"] == "/trackers/0/transaction_id"
    assert api.get(f"{TRACKERS}/{capture_id}-B2").status_code == 200
    assert api.get(f"{TRACKERS}/UNKNOWNCAPTURE123-A1").status_code == 404


def test_duplicates_and_numbers_without_carrier_are_reported_per_tracker(api: Api) -> None:
    capture_id = capture(api)
    assert api.post(BATCH, {"trackers": [tracker(capture_id, "DUP1")]}).status_code == 200
    body = {
        "trackers": [
            tracker(capture_id, "DUP1"),
            tracker(capture_id, "NEW1"),
            tracker(capture_id, "NEW1"),
            {"transaction_id": capture_id, "status": "SHIPPED", "tracking_number": "NOCARRIER"},
            tracker(capture_id, "DHL2", carrier="DHL"),
        ]
    }
    result = api.post(BATCH, body).json()
    assert [i["tracking_number"] for i in result["tracker_identifiers"]] == ["NEW1", "DHL2"]
    assert [e["details"][0]["issue"] for e in result["errors"]] == [
        "TRACKER_ALREADY_EXISTS",
        "TRACKER_ALREADY_EXISTS",
        "MISSING_REQUIRED_PARAMETER",
    ]
    assert api.get(f"{TRACKERS}/{capture_id}-NOCARRIER").status_code == 404


def test_a_tracker_without_a_number_is_identified_by_its_transaction(api: Api) -> None:
    capture_id = capture(api)
    result = api.post(BATCH, {"trackers": [tracker(capture_id, None)]}).json()
    [identifier] = result["tracker_identifiers"]
    assert "tracking_number" not in identifier
    assert api.get(f"{TRACKERS}/{capture_id}-NOTRACKER").json()["status"] == "SHIPPED"


def test_batch_bodies_are_validated_against_the_spec(api: Api) -> None:
    capture_id = capture(api)
    cases: list[tuple[Any, str]] = [
        ({}, "MISSING_REQUIRED_PARAMETER"),
        ({"trackers": []}, "INVALID_ARRAY_MIN_ITEMS"),
        ({"trackers": [{"transaction_id": capture_id}]}, "MISSING_REQUIRED_PARAMETER"),
        ({"trackers": [tracker(capture_id, status="LOST")]}, "INVALID_PARAMETER_VALUE"),
        ({"trackers": [tracker(capture_id, carrier="PIGEON")]}, "INVALID_PARAMETER_VALUE"),
        (
            {"trackers": [tracker(capture_id, shipment_date="20-11-2026")]},
            "INVALID_PARAMETER_SYNTAX",
        ),
    ]
    for body, issue in cases:
        response = api.post(BATCH, body)
        assert (response.status_code, issues(response)) == (400, [issue]), body
    assert api.get(TRACKERS, params={"transaction_id": capture_id}).json()["trackers"] == []


def test_updating_a_tracker_replaces_its_details(api: Api, sandbox: Any) -> None:
    capture_id = capture(api)
    api.post(BATCH, {"trackers": [tracker(capture_id, "UPD1")]})
    path = f"{TRACKERS}/{capture_id}-UPD1"
    update = tracker(capture_id, "UPD1", status="DELIVERED", carrier="FEDEX")
    response = api.put(path, update)
    assert response.status_code == 204
    assert response.content == b""
    shown = api.get(path).json()
    assert (shown["status"], shown["carrier"]) == ("DELIVERED", "FEDEX")
    cancel = api.put(path, {"transaction_id": capture_id, "status": "CANCELLED"})
    assert cancel.status_code == 204
    assert api.get(path).json()["status"] == "CANCELLED"


def test_illegal_updates_are_refused_and_change_nothing(api: Api) -> None:
    capture_id = capture(api)
    api.post(BATCH, {"trackers": [tracker(capture_id, "KEEP1")]})
    path = f"{TRACKERS}/{capture_id}-KEEP1"
    renumber = api.put(path, tracker(capture_id, "OTHER9"))
    assert (renumber.status_code, issues(renumber)) == (422, ["CANNOT_CHANGE_TRACKER_ID"])
    bad = api.put(path, {"transaction_id": capture_id, "status": "MISLAID"})
    assert (bad.status_code, issues(bad)) == (400, ["INVALID_PARAMETER_VALUE"])
    missing = api.put(f"{TRACKERS}/{capture_id}-NOPE", tracker(capture_id, "NOPE"))
    assert missing.status_code == 404
    shown = api.get(path).json()
    assert (shown["status"], shown["carrier"], shown["tracking_number"]) == (
        "SHIPPED",
        "UPS",
        "KEEP1",
    )


def test_the_single_add_endpoint_fails_whole_on_an_unknown_transaction(api: Api) -> None:
    capture_id = capture(api)
    ok = api.post(TRACKERS, {"trackers": [tracker(capture_id, "ONE1")]})
    assert ok.status_code == 200
    assert ok.json()["tracker_identifiers"][0]["tracking_number"] == "ONE1"
    body = {"trackers": [tracker(capture_id, "TWO2"), tracker("UNKNOWNCAPTURE123", "X")]}
    refused = api.post(TRACKERS, body)
    assert refused.status_code == 404
    assert api.get(f"{TRACKERS}/{capture_id}-TWO2").status_code == 404


def test_trackers_are_private_to_their_merchant(api: Api, other_api: Api) -> None:
    capture_id = capture(api)
    api.post(BATCH, {"trackers": [tracker(capture_id, "MINE1")]})
    assert other_api.get(f"{TRACKERS}/{capture_id}-MINE1").status_code == 404
    put = other_api.put(f"{TRACKERS}/{capture_id}-MINE1", tracker(capture_id, "MINE1"))
    assert put.status_code == 404
    listed = other_api.get(TRACKERS, params={"transaction_id": capture_id})
    assert listed.status_code == 404
    assert listed.json()["name"] == "RESOURCE_NOT_FOUND"
    [reason] = listed.json()["details"]
    assert (reason["issue"], reason["field"], reason["location"]) == (
        "INVALID_RESOURCE_ID",
        "/transaction_id",
        "query",
    )
    result = other_api.post(BATCH, {"trackers": [tracker(capture_id, "THEIRS")]}).json()
    assert "tracker_identifiers" not in result
    assert result["errors"][0]["details"][0]["issue"] == "INVALID_RESOURCE_ID"
    assert api.get(f"{TRACKERS}/{capture_id}-THEIRS").status_code == 404


def test_listing_needs_a_transaction_id(api: Api) -> None:
    response = api.get(TRACKERS)
    assert (response.status_code, issues(response)) == (400, ["MISSING_REQUIRED_PARAMETER"])
