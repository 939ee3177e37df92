"""Nodes: a link end (PHY + DL), an endpoint (a link end and a TL), a switch (specs/fabric.md)."""
