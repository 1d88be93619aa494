"""Shared pieces every step uses: contracts, params, io, stats, the registry."""
