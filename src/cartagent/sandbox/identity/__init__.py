"""Who may call the sandbox: OAuth2 client-credentials tokens, merchants' client secrets at rest,
and the sandbox as an authorization server for resource servers (``cartagent mcp``)."""
