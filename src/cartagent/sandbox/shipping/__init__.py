"""shipping"""
