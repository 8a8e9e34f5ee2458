"""Local (offline, deterministic) implementations of the agent's roles."""
