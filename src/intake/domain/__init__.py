"""The pure core of intake: values, rules and the request's state machine. No I/O."""
