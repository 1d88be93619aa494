"""Step 3: answer every question with each generation family."""
