"""invoicing"""
