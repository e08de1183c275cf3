"""Shipment Tracking v1: trackers on captured transactions."""
