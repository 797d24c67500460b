"""The floor: the plainest stdio JSON-RPC loop that answers the same messages, no SDK at all."""

import json
import sys

out = sys.stdout
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message["method"]
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "floor", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        name = message["params"]["arguments"]["name"]
        result = {"content": [{"type": "text", "text": f"Hello, {name}!"}],
                  "structuredContent": {"greeting": "Hello", "name": name, "times": 1}}
    else:
        result = {}
    out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    out.flush()
