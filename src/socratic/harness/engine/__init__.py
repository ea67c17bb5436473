"""The campaign engine: evaluations, triggers and suggestions, the stop hook, the prompt
texts and startup (bank, scenarios). Imports only harness.core."""
