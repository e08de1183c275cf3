"""Reporting: transaction search v1 and the merchant's sales insights."""
