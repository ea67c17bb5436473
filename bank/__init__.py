"""socratic bank."""
