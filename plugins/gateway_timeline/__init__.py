"""The timeline plugin (being written)."""
