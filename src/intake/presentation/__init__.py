"""Presentation: the one JSON shape of each object, whichever entry point prints it
(`views`), and submissions written as CSV or JSON lines (`exports`)."""
