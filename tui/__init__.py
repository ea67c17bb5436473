"""socratic tui."""
