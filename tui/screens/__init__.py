"""Modal screens: help, stop confirmation, free-text question, question picker."""
