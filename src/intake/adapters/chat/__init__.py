"""The chat apps' senders: one module per app shapes its message, `sender.py` posts it."""
