"""Evaluation sets and scoring for cartagent's components (query understanding first)."""
