"""Scapy layers generated from the bit-field declarations (GPL-2.0 Scapy: optional extra).

Import :mod:`ualink_ref.scapy_layers` (the one public import), not these modules directly.
"""
