"""Agentic commerce: PayPal as the caller of a merchant's Cart API (its signing key and JWTs),
and ACP's Delegate Payment API (the sandbox as the PSP that vaults a buyer's card)."""
