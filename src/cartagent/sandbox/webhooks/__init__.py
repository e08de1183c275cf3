"""webhooks"""
