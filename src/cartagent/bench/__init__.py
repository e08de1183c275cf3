"""Benchmarks that print their figures (``cartagent bench ...``)."""
