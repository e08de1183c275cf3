"""UCP as both sides need it: its releases (v2026-04-08 spoken, v2026-01-11 and v2026-08-25
translated at the edge), JSON Schemas, the ``UCP-Agent`` header, RFC 9421 message signatures,
profiles and negotiation, the PayPal payment handler's shapes and a postal address."""
