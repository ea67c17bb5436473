"""Campaigns by hand: the manual agent's steps (`socratic hook evaluate|say|stop`). Imports
harness.attached, harness.engine and harness.core."""
