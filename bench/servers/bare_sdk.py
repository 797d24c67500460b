"""The comparison: a bare low-level SDK server with the same `hello` tool, on the SDK's own stdio transport."""

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(
    name="hello",
    description="Greet someone by name.",
    input_schema={"type": "object", "properties": {"name": {"type": "string"}, "times": {"type": "integer"}},
                  "required": ["name"], "additionalProperties": False},
)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params):
    name = (params.arguments or {}).get("name", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"Hello, {name}!")],
                                structured_content={"greeting": "Hello", "name": name, "times": 1})


async def main():
    server = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
