"""ACP (release 2026-04-17) as both sides need it: its version and JSON Schema, the product feed
format, the request signature and the fulfillment shapes."""
