"""The selected system as a web service: `finrag serve` (FastAPI + uvicorn), its page, limits and metrics."""
