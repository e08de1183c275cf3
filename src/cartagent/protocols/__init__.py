"""The agentic-commerce protocols as both sides need them, apart from either side.

ACP (:mod:`.acp`) and UCP (:mod:`.ucp`): their releases, shipped JSON Schemas (``specs/``, with
their licences) and validation, request signatures, the shapes an agent sends and a merchant
reads alike, and UCP's profiles, negotiation and translations between releases. The merchant
that serves them is :mod:`cartagent.commerce`; the agent's clients are
:mod:`cartagent.shopping`. Nothing here serves HTTP, sends a request or opens a database.
"""
