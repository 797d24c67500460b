# Adds the gateway to Claude Code for every project of this user.
claude mcp add --scope user gateway -- gateway serve
