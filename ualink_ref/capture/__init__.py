"""Captures: the pcap/pcapng record format, recording runs of the harness, dissection."""
