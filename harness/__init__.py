"""socratic harness."""
