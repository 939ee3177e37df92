"""The one network harness: ports, links with latency and channels, taps, pairs.

specs/README.md, "Architecture".
"""
