"""The sessions plugin (being written)."""
