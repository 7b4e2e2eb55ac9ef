"""Who is calling and which scopes they may use, for every face of the server over HTTP.

``tokens``: the named tokens file and its scope grants. ``bearer``: the HTTP layer that checks a
request's token and names its principal and grants in the ASGI scope, and the two readers of them
that the MCP adapter and the dashboard both use, so that one grant means the same on both.
"""
