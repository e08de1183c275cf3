"""Query understanding and retrieval: words -> :class:`SearchQuery` -> ranked products."""

from .query import Exclusion, PriceRange, SearchQuery, search_query_json_schema
from .rules import parse as parse_rules

__all__ = ["Exclusion", "PriceRange", "SearchQuery", "parse_rules", "search_query_json_schema"]
