"""Catalog products v1, billing plans v1 and subscriptions v1, with the billing cycle that the
sandbox clock runs."""
