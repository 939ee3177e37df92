"""Shared test helpers: an importable package (the suite runs under --import-mode=importlib)."""
