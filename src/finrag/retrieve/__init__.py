"""Step 2: chunk, embed, search, re-rank, and the retrieval grid that picks the setup."""
