"""Hostile input over HTTP: schemathesis against a running server, and Hypothesis
against the app in process."""
