"""Invoicing v2: invoices (routes, the document, PayPal's arithmetic), their listing, QR codes,
reminders, conditional rules, payments recorded outside PayPal, the buyer's page and recurring
series."""
