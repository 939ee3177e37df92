"""The fast fidelity (specs/fast.md)."""
