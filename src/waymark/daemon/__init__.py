"""The long-lived process: what any face that runs for a while keeps warm for its data home."""
