"""cartagent: a commerce agent with a typed PayPal toolkit and a local PayPal-compatible sandbox."""

__all__ = ["__version__"]

__version__ = "0.1.0.dev0"
