"""Coverage-guided fuzzing of the body parsers and the control-field split (atheris)."""
