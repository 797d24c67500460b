"""The plugin API: what a plugin declares (tools, resources, prompts, settings), the hooks it implements, the
per-call context it is given (deadline, gate, masks, folders), its refresh and the kernel's file
notifications, and the small helpers every plugin wrote for itself. `gateway` re-exports the public names.
"""
