"""A bare low-level SDK server with one `echo` tool, for the transport tests and the benchmark.

Run as a script: `python echo_server.py [--sdk] [--max-line N] [--max-depth N] [--chunk N] ...`.
It serves over `gateway.wire.transport.stdio_transport`, or over the SDK's own `stdio_server` with `--sdk`,
so both can be compared with everything else equal. The tool's arguments: `text` (echoed back),
`sleep` (seconds to wait first, to keep a call in flight) and `print` (writes to stdout, which
must not reach the wire).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio
import mcp.types as t
from mcp.server import Server, ServerRequestContext

ECHO = t.Tool(
    name="echo",
    description="Returns its text.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}, "sleep": {"type": "number"}, "print": {"type": "string"}},
    },
)


async def list_tools(
    ctx: ServerRequestContext[Any], params: t.PaginatedRequestParams | None
) -> t.ListToolsResult:
    return t.ListToolsResult(tools=[ECHO])


async def call_tool(ctx: ServerRequestContext[Any], params: t.CallToolRequestParams) -> t.CallToolResult:
    args = params.arguments or {}
    if params.name != "echo":
        return t.CallToolResult(content=[t.TextContent(type="text", text="unknown tool")], is_error=True)
    if args.get("sleep"):
        await anyio.sleep(float(args["sleep"]))
    if args.get("print"):
        # A careless handler: this must land on stderr, never between two frames.
        print(args["print"], flush=True)
    return t.CallToolResult(content=[t.TextContent(type="text", text=str(args.get("text", "")))])


def build() -> Server[Any]:
    return Server("echo", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sdk", action="store_true", help="serve through mcp.server.stdio.stdio_server")
    parser.add_argument("--max-line", type=int, default=None)
    parser.add_argument("--max-depth", type=int, default=None)
    parser.add_argument("--chunk", type=int, default=None, help="read size, to exercise split lines")
    parser.add_argument("--drain-timeout", type=float, default=None)
    parser.add_argument("--after", default=None, help="printed to stdout once the transport has exited")
    opts = parser.parse_args(argv)

    server = build()
    init = server.create_initialization_options()
    if opts.sdk:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, init)
        return

    from gateway.wire import transport

    if opts.chunk:
        transport.READ_CHUNK = opts.chunk
    limits: dict[str, Any] = {}
    if opts.max_line:
        limits["max_line"] = opts.max_line
    if opts.max_depth:
        limits["max_depth"] = opts.max_depth
    if opts.drain_timeout is not None:
        limits["drain_timeout"] = opts.drain_timeout
    async with transport.stdio_transport(**limits) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, init)
    if opts.after:
        # fd 1 is the wire again: this shows the transport gave it back.
        print(opts.after, flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
