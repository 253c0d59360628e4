"""fastbleu.inputs."""
