"""Moving the expensive outputs to a fresh machine (pack / restore) and timing the replay."""
