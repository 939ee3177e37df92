"""Physical layer: Reed–Solomon FEC, flit <-> codeword mapping, error channels, error rates."""

from __future__ import annotations

from ualink_ref.phy.reedsolomon import KP4, LL, ReedSolomonCode, RSDecodeResult

__all__ = ["KP4", "LL", "RSDecodeResult", "ReedSolomonCode"]
