"""The service layer: use cases that drive the domain through the ports."""
