"""The ports: what the service needs from the outside world, as typing.Protocol."""
