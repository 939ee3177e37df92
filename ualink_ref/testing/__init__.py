"""Verification tooling: golden vectors, public Hypothesis strategies, differential testing."""
