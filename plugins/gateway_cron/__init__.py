"""The cron plugin (being written)."""
