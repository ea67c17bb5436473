"""Attached agents and their hooks (`socratic attach`, `socratic hook`): agent specs
(agents/NAME.toml), launching and confinement, headless runs, the hook server and client
(hookclient.py, hookclient.c). Imports harness.engine and harness.core."""
