"""identity"""
