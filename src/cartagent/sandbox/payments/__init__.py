"""payments"""
