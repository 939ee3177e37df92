"""Experiments on the harness: the link run, the pod, workloads, faults, the model, reports.

specs/README.md, "Architecture"; specs/fabric.md.
"""
