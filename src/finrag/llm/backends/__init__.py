"""LLM backends, one module per backend; the contract and registry in base.py."""
