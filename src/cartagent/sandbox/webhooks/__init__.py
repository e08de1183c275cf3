"""Webhooks v1: the event log every API writes to, subscriptions and their routes, signing as
PayPal signs, and delivery with retries."""
