"""agentic"""
