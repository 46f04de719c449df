"""Performance models: collectives (and, later, the training step)."""
