/**
 * The configuration a user pastes into an MCP client to connect it to engram:
 * for clients that launch a command (Claude Desktop, Cursor, Goose) the stdio
 * bridge `engram-mcp` with the token in its environment, and for clients that
 * speak Streamable HTTP themselves (Cursor, Claude Code) the URL with the token
 * as a bearer header. Pure text: no DOM, no bridge.
 */

/** What a snippet needs: the token shown once, the endpoint, and where the bridge script is (when the app knows). */
export interface HubConfigInput {
  token: string;
  /** The MCP endpoint, e.g. `http://127.0.0.1:7457/mcp`. */
  url: string;
  /** Absolute path of scripts/engram-mcp.mjs (a checkout); absent: the `engram-mcp` bin on PATH (`npm install -g` of a checkout or tarball). */
  bridgeScript?: string;
}

/** One snippet: a title, where it goes, and the text to copy. */
export interface HubConfigSnippet {
  id: 'claude-desktop' | 'cursor-stdio' | 'cursor-http' | 'claude-code-http';
  title: string;
  /** Where the text goes (file or terminal). */
  where: string;
  text: string;
}

/** The name the server gets in the client's configuration. */
const SERVER_NAME = 'engram';

function stdioEntry(input: HubConfigInput): Record<string, unknown> {
  // Without a checkout the bridge is the package's bin on PATH (a client launches it from any folder,
  // where `npx engram-mcp` would look the name up in the registry instead).
  const launch =
    input.bridgeScript === undefined
      ? { command: 'engram-mcp', args: [] }
      : { command: 'node', args: [input.bridgeScript] };
  return { ...launch, env: { ENGRAM_MCP_TOKEN: input.token, ENGRAM_MCP_URL: input.url } };
}

/** A single-quoted shell word (the token and URL hold no quote, but a path might). */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * Every snippet for one new client.
 * @example
 * hubConfigSnippets({ token: 'engram_…', url: 'http://127.0.0.1:7457/mcp' })[0].text
 * // {"mcpServers":{"engram":{"command":"engram-mcp","args":[],"env":{…}}}} (indented)
 */
export function hubConfigSnippets(input: HubConfigInput): HubConfigSnippet[] {
  const json = (value: unknown): string => JSON.stringify(value, null, 2);
  const stdio = json({ mcpServers: { [SERVER_NAME]: stdioEntry(input) } });
  const onPath =
    input.bridgeScript === undefined
      ? ' (the engram-mcp command must be on PATH: npm install -g with the path of an engram checkout or its packed tarball; engram is not on the npm registry)'
      : '';
  return [
    {
      id: 'claude-desktop',
      title: 'Claude Desktop (stdio bridge)',
      where: `claude_desktop_config.json (Settings → Developer → Edit Config); its config file launches commands only, so it goes through engram-mcp${onPath}`,
      text: stdio,
    },
    {
      id: 'cursor-http',
      title: 'Cursor (Streamable HTTP)',
      where: '~/.cursor/mcp.json, or .cursor/mcp.json in a project',
      text: json({
        mcpServers: { [SERVER_NAME]: { url: input.url, headers: { Authorization: `Bearer ${input.token}` } } },
      }),
    },
    {
      id: 'cursor-stdio',
      title: 'Cursor (stdio bridge)',
      where: `~/.cursor/mcp.json, for a Cursor without HTTP servers${onPath}`,
      text: stdio,
    },
    {
      id: 'claude-code-http',
      title: 'Claude Code (Streamable HTTP)',
      where: 'a terminal',
      text: `claude mcp add --transport http ${SERVER_NAME} ${shellWord(input.url)} --header ${shellWord(`Authorization: Bearer ${input.token}`)}`,
    },
  ];
}
