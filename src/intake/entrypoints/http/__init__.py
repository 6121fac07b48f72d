from intake.entrypoints.http.app import create_app

__all__ = ["create_app"]
