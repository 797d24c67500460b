"""Mail on the person's Maildir folders, sioul's surface: the Porch, search_mail, read_message, draft_reply;
contacts, notes, ties and find (part 2: search_contacts, search_notes, read_note, add_note, link, links, find).

Settings: `accounts` (name, maildir, addresses, authserv_id, drafts, from_name), `blocked` senders (only counted),
`admin_windows` (when the Porch gives its lists) and the AI shield's `shielded`, `shield_command`, `shield_timeout`.
The index lives in the plugin's cache folder, masked.
"""

from __future__ import annotations

from gateway import Answer, Context, Detected, PluginHost, Resource, ResourceTemplate, hookimpl


@hookimpl
def register_settings(gateway: PluginHost) -> type:
    from gateway_mail.settings import MailSettings

    return MailSettings


@hookimpl
def register_refresh(gateway: PluginHost) -> list:
    from gateway_mail.freshness import refresh

    return [refresh()]


@hookimpl
def detect(gateway: PluginHost) -> Detected:
    from gateway_mail.detection import detect as found

    settings, said = found()
    return Detected(settings, said)


@hookimpl
def register_tools(gateway: PluginHost) -> list:
    from gateway_mail.mail.tools import (
        draft_reply,
        porch,
        read_attachment,
        read_message,
        read_thread,
        search_mail,
    )
    from gateway_mail.notes import tools as part2
    from gateway_mail.plan.tools import TOOLS as PLAN_TOOLS

    return [porch, search_mail, read_message, draft_reply, read_attachment, read_thread, *PLAN_TOOLS,
            part2.search_contacts, part2.search_notes, part2.read_note, part2.add_note, part2.link, part2.links,
            part2.find]


@hookimpl
def register_resources(gateway: PluginHost) -> list[Resource]:
    from gateway_mail.mail.tools import read_porch
    from gateway_mail.plan.tools import read_agenda, read_projects, read_tasks_now, read_tasks_today

    return [Resource(uri="sioul:porch", name="porch", read=read_porch, title="The Porch",
                     description="What came and what waits, as the porch tool gives it.", mime_type="text/plain"),
            Resource(uri="sioul:tasks/now", name="tasks-now", read=read_tasks_now, title="Next steps",
                     description="list_tasks view now.", mime_type="text/plain"),
            Resource(uri="sioul:tasks/today", name="tasks-today", read=read_tasks_today, title="Today's tasks",
                     description="list_tasks view today.", mime_type="text/plain"),
            Resource(uri="sioul:agenda", name="agenda", read=read_agenda, title="Agenda",
                     description="The coming week, as agenda gives it.", mime_type="text/plain"),
            Resource(uri="sioul:projects", name="projects", read=read_projects, title="Projects",
                     description="The projects open to agents, as list_projects gives them.", mime_type="text/plain")]


@hookimpl
def register_resource_templates(gateway: PluginHost) -> list[ResourceTemplate]:
    from gateway_mail.mail.tools import read_mid
    from gateway_mail.notes.tools import read_note_resource
    from gateway_mail.plan.tools import read_remind

    return [ResourceTemplate(uri_template="mid:{message_id}", name="message", read=read_mid, title="A message",
                             description="One message by its Message-ID, as read_message gives it.",
                             mime_type="text/plain"),
            ResourceTemplate(uri_template="sioul:note/{path}", name="note", read=read_note_resource, title="A note",
                             description="One note by its path under the notes folder, as read_note gives it.",
                             mime_type="text/plain"),
            ResourceTemplate(uri_template="sioul:remind/{ident}", name="remind", read=read_remind,
                             title="A remind reminder", description="One reminder of the person's remind files, "
                             "by the address reminders gives: where it is written and when it rings.",
                             mime_type="text/plain"),
            *[ResourceTemplate(uri_template=f"sioul:{kind}/{{ident}}", name=kind, read=_reader(kind), title=title,
                               description=f"{description}, by the address the tools give.", mime_type="text/plain",
                               complete=_open_projects if kind == "project" else None)
              for kind, title, description in (
                  ("project", "A project's page", "A project's page, as read_project gives it"),
                  ("task", "A task", "One task"), ("event", "An event", "One event"),
                  ("contact", "A contact", "One contact card"))]]


def _open_projects(ctx: Context, argument: str, value: str) -> list[str]:
    """completion/complete for a project's page: the ids of the projects open to agents, never a closed one."""
    return sorted(p.id for p in ctx.gate.open_projects() if p.id.startswith(value))


def _reader(kind: str):
    def read(ctx: Context, ident: str) -> Answer:
        from gateway_mail.projects.reading import thing_answer

        return thing_answer(ctx, kind, ident)

    return read


@hookimpl
def register_commands(gateway: PluginHost) -> list:
    from gateway_mail.cli import commands

    return commands(gateway)


@hookimpl
def register_demo(gateway: PluginHost) -> list[tuple[str, dict]]:
    from gateway_mail.demo import make_demo

    return make_demo(gateway)


@hookimpl
def traits_of(gateway: PluginHost, address: str):  # noqa: ANN201 (a Traits or None; the import stays lazy)
    if address.startswith("sioul:remind/"):
        from gateway_mail.plan.remind import traits_at

        return traits_at(gateway, address)
    from gateway_mail.projects.described import traits_of as described

    return described(gateway, address)


@hookimpl
def census(gateway: PluginHost):  # noqa: ANN201 (an iterator of (source, Traits))
    import itertools

    from gateway_mail.plan.remind import census as reminders
    from gateway_mail.projects.described import census as described

    return itertools.chain(described(gateway), reminders(gateway))


@hookimpl
def tied_projects(gateway: PluginHost, addresses: list[str]) -> dict[str, list[str]]:
    # The work lives in projects/tied.py: a module named like this hook would be shadowed by it here.
    from gateway_mail.projects.tied import projects_tied
    from gateway_mail.projects.ties import FILE_NAME

    return projects_tied(gateway.folders.data / FILE_NAME, addresses)
