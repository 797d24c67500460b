"""Texts and calls: the phone's SMS, MMS and call log, from Android's "SMS Backup & Restore" XML exports.

Off until the person turns it on (`enabled = true` in `[plugins.texts]`): texts carry other people's words, often
more private than mail. Off, its tools are neither listed nor called (the core hides the tools of a plugin whose
declared `enabled` setting is false, and refuses them with a sentence saying how to turn it on).
"""

from __future__ import annotations

from pathlib import Path

from gateway import Setting, hookimpl

__version__ = "0.1.0"


@hookimpl
def register_settings(gateway):  # noqa: ANN001, ANN201 (the hook's documented shape)
    return [
        Setting("enabled", False, "allow agents to read the texts and calls (off by default)"),
        Setting("exports", "~/SMSBackupRestore", "the folder of SMS Backup & Restore exports (sms-*.xml, "
                "calls-*.xml), searched at any depth", type=Path),
        Setting("contacts", "", "a vdir of vCards (as vdirsyncer keeps it), to know who a number is", type=Path),
        Setting("region", "", "the country of numbers written without their country code, two letters (FR, US)"),
        Setting("drafts", "", "where drafts are saved (default: the plugin's data folder, drafts/)", type=Path),
        Setting("timezone", "", "the zone times are shown in (an IANA name; default: the gateway's)"),
        Setting("max_file_mb", 512, "an export larger than this is not read", minimum=1, maximum=8192),
        Setting("max_elements", 5_000_000, "an export with more XML elements is not read", minimum=1000),
        Setting("max_seconds", 120, "an export that takes longer to read is not read", type=float, minimum=1),
    ]


@hookimpl
def register_tools(gateway):  # noqa: ANN001, ANN201
    from gateway_texts.tools import TOOLS

    return TOOLS
