"""Mail on the person's Maildir folders, sioul's surface: the Porch, search_mail, read_message, draft_reply.

Settings: `accounts` (name, maildir, addresses, authserv_id, drafts), `blocked` senders (only counted) and
`admin_windows` (when the Porch gives its lists). The index lives in the plugin's cache folder, masked.
"""

from __future__ import annotations

from gateway import PluginHost, Resource, ResourceTemplate, Setting, hookimpl


@hookimpl
def register_settings(gateway: PluginHost) -> list[Setting]:
    return [
        Setting("accounts", [], "the mail accounts: a list of { name, maildir, addresses, authserv_id, drafts }",
                type=list),
        Setting("blocked", [], 'senders whose mail is only counted: "pat@example.net" or "@example.net"',
                type=list[str]),
        Setting("admin_windows", [], 'when the Porch gives its lists, e.g. ["09:00-10:00"]; [] = always',
                type=list[str]),
    ]


@hookimpl
def register_tools(gateway: PluginHost) -> list:
    from gateway_mail.surface import draft_reply, porch, read_message, search_mail

    return [porch, search_mail, read_message, draft_reply]


@hookimpl
def register_resources(gateway: PluginHost) -> list[Resource]:
    from gateway_mail.surface import read_porch

    return [Resource(uri="sioul:porch", name="porch", read=read_porch, title="The Porch",
                     description="What came and what waits, as the porch tool gives it.", mime_type="text/plain")]


@hookimpl
def register_resource_templates(gateway: PluginHost) -> list[ResourceTemplate]:
    from gateway_mail.surface import read_mid

    return [ResourceTemplate(uri_template="mid:{message_id}", name="message", read=read_mid, title="A message",
                             description="One message by its Message-ID, as read_message gives it.",
                             mime_type="text/plain")]


@hookimpl
def register_commands(gateway: PluginHost) -> list:
    from gateway_mail.cli import commands

    return commands(gateway)


@hookimpl
def register_demo(gateway: PluginHost) -> list[tuple[str, dict]]:
    from gateway_mail.demo import make_demo

    return make_demo(gateway)
