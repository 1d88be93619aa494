"""Versioned prompt templates (render.py, templates/) and the helpers that read prompts and answers back (parse.py)."""
