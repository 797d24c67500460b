"""Importers that fill the event store: ActivityWatch's database, and JSONL from any envelope recorder."""
