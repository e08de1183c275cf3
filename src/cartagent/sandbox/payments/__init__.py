"""Orders v2 and Payments v2: orders and their amounts, what pays for them, the buyer's approval
page, authorizations, captures and refunds, and the money that moves (settlement)."""
