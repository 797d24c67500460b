"""For `gateway demo`: two invented scheduled jobs."""

from __future__ import annotations

from gateway import PluginHost
from gateway_cron import store


def make_demo(host: PluginHost) -> list[tuple[str, dict]]:
    connection = store.open_for_writing(host.path_setting("store", store.default_path(host.folders.data)))
    try:
        existing = {job.name for job in store.jobs(connection)}
        for job in (
            store.Job("garden-digest", "0 7 * * 1", "Summarise last week's garden mail", "ada@example.org",
                      True, "Europe/Paris", "", "", ""),
            store.Job("backup-check", "30 22 * * *", "Check that last night's backup finished", "ada@example.org",
                      False, "", "", "", ""),
        ):
            if job.name not in existing:
                store.add(connection, job)
        connection.commit()
    finally:
        connection.close()
    return [("rousseau_cron_list", {})]
