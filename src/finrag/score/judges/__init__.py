"""Groundedness judges, one module per judge; the registry and contract in base.py."""
