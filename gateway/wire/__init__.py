"""The wire: how requests arrive and answers leave. The stdio transport and its descriptors, the Streamable HTTP
app and its tokens' check, the MCP server built on the SDK (one handler per request kind), notifications, and
the few places a library's inner shape is leaned on (seams).
"""
