"""Physical layer: Reed–Solomon FEC, flit <-> codeword mapping, error channels, error rates.

* :data:`KP4` = RS(544,514), t = 15 and :data:`LL` = RS(272,258), t = 7, batched
  codecs over GF(2^10) (IEEE 802.3 clause 91 conventions);
* :func:`encode_flits` / :func:`decode_flits` / :func:`wire_bytes_per_flit`:
  640-byte DL flits on the wire in modes ``"kp4"``, ``"ll"``, ``"none"``, with
  1/2/4-way symbol interleave;
* :class:`BitErrorChannel`, :class:`BurstChannel`, :func:`apply_bit_errors`:
  seeded error channels on wire bytes;
* :mod:`ualink_ref.phy.ber`: the analytic error-rate model;
* :mod:`ualink_ref.phy.accel`: which FEC engine runs: compiled numba kernels
  when the ``fast`` extra is installed (off with ``UALINK_REF_NO_NUMBA=1``),
  numpy otherwise; results are identical.

See specs/phy.md for every parameter and its provenance.
"""

from __future__ import annotations

from ualink_ref.phy.ber import (
    accumulation_time_ns,
    codeword_error_ratio,
    error_rate_table,
    flit_loss_ratio,
    post_fec_ber,
    symbol_error_probability,
)
from ualink_ref.phy.channel import BitErrorChannel, BurstChannel, apply_bit_errors
from ualink_ref.phy.flits import (
    FLIT_BYTES,
    MODES,
    FecMode,
    FlitDecodeResult,
    decode_flits,
    encode_flits,
    wire_bytes_per_flit,
)
from ualink_ref.phy.reedsolomon import KP4, LL, ReedSolomonCode, RSDecodeResult

__all__ = [
    "FLIT_BYTES",
    "KP4",
    "LL",
    "MODES",
    "BitErrorChannel",
    "BurstChannel",
    "FecMode",
    "FlitDecodeResult",
    "RSDecodeResult",
    "ReedSolomonCode",
    "accumulation_time_ns",
    "apply_bit_errors",
    "codeword_error_ratio",
    "decode_flits",
    "encode_flits",
    "error_rate_table",
    "flit_loss_ratio",
    "post_fec_ber",
    "symbol_error_probability",
    "wire_bytes_per_flit",
]
