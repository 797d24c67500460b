"""The spam filter's core, importable without the gateway: a message's tokens (`tokens`), the score (`score`),
the model file (`store`) and the lean command a delivery rule runs for each message (`classify`).

The spam plugin (`gateway_spam`) trains and serves with these same modules, so that what `python -m
spamfilter.classify` decides for a message is what the plugin decides for it. Nothing here imports the MCP SDK,
the plugin system or click: a procmail or maildrop rule pays for Python, the email package and SQLite alone.
"""

# Bytes read of one message file, here and by the long-lived classifier: bigger files are attachments' carriers,
# not what a filter learns from. Here (not in `tokens`) so that the command's client reads files without importing
# the email package.
MAX_MESSAGE = 20 * 1024 * 1024
