/**
 * The REST routes of `/api/v1` that have no MCP tool, each with the reason (docs/mcp.md "Coverage"). Every other
 * route is named by a tool's `routes`; test/mcp/coverage.int.test.ts reads the venue's OpenAPI document and fails
 * when a route is in neither place, so a new endpoint cannot ship without its tool (or a reason here).
 */
export const ROUTES_WITHOUT_TOOLS: Readonly<Record<string, string>> = {
  'POST /auth/register':
    'creates an account and its first credentials: an MCP host is given a key or JWT before it connects',
  'POST /auth/login':
    'exchanges a key and secret for a JWT: the host is configured with the credential it uses',
  'POST /auth/user-login': "a person's e-mail and password login, for the dashboard",
  'PUT /auth/password': "a person's password change, not an agent's action",
  'GET /agents/{agent_id}/skill.md': "the resource ptv://skill.md (the scoped agent's guide)",
};
