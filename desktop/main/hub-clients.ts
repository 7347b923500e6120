/**
 * The MCP clients the user let in: each has a bearer token and the scope
 * (agent, user) every one of its calls runs in. Only a SHA-256 of each token is
 * kept, in a file of mode 0600 in the app's data folder, and a presented token
 * is compared with `timingSafeEqual`; the token itself is shown to the user
 * once, when the client is created. The last calls of each client live in
 * memory for the Agents view.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { NotFoundError, StoreError, ValidationError } from '../../lib/errors.js';
import { checkOptions, definedOnly, id, optional, type OptionsSpec } from '../../lib/util/options.js';
import {
  MAX_HUB_CALL_RECORDS,
  MAX_HUB_CLIENT_NAME_CHARS,
  type HubCallRecord,
  type HubClientInfo,
  type HubScope,
} from '../preload/bridge-api.js';

/** A token's prefix, so a user (or a secret scanner) can tell what it is. */
export const TOKEN_PREFIX = 'engram_';

interface StoredClient {
  id: string;
  name: string;
  scope: HubScope;
  createdAt: string;
  /** Hex SHA-256 of the token. */
  tokenHash: string;
}

function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The checks of a {@link HubScope}: the library's own id checks, one spec tied to the bridge's type. */
const HUB_SCOPE_SPEC = { agentId: id, userId: optional(id) } satisfies OptionsSpec<HubScope>;

/** A scope from untrusted input (IPC): an agent id and an optional user id, nothing else. */
export function requireHubScope(value: unknown): HubScope {
  return definedOnly(
    checkOptions('scope', value, HUB_SCOPE_SPEC, 'must be an object with agentId and optionally userId'),
  ) as HubScope;
}

/** A client's display name: 1 to MAX_HUB_CLIENT_NAME_CHARS characters. */
export function requireClientName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_HUB_CLIENT_NAME_CHARS) {
    throw new ValidationError('name', `must be a name of 1 to ${MAX_HUB_CLIENT_NAME_CHARS} characters`);
  }
  return value.trim();
}

/**
 * The registry of clients, persisted in one JSON file.
 * @example
 * const clients = await HubClients.load(join(userData, 'mcp-clients.json'))
 * const { token } = await clients.create('Claude Desktop', { agentId: 'claude', userId: 'me' })
 * clients.verify(token)?.scope // { agentId: 'claude', userId: 'me' }
 */
export class HubClients {
  readonly #file: string;
  readonly #clients: StoredClient[];
  readonly #calls = new Map<string, HubCallRecord[]>();

  private constructor(file: string, clients: StoredClient[]) {
    this.#file = file;
    this.#clients = clients;
  }

  /** Reads the registry (none yet: empty). A damaged file is a StoreError, not an empty registry that would be written over it. */
  static async load(file: string): Promise<HubClients> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new HubClients(file, []);
      throw new StoreError(`cannot read the MCP clients file ${file}`, { cause: e });
    }
    try {
      const parsed = JSON.parse(text) as { clients?: unknown };
      if (!Array.isArray(parsed.clients)) throw new ValidationError('clients', 'must be an array');
      const clients = parsed.clients.map((c: unknown): StoredClient => {
        const r = c as Record<string, unknown>;
        if (
          typeof r['id'] !== 'string' ||
          typeof r['tokenHash'] !== 'string' ||
          !/^[0-9a-f]{64}$/.test(r['tokenHash']) ||
          typeof r['createdAt'] !== 'string'
        ) {
          throw new ValidationError('client', 'is missing id, tokenHash or createdAt');
        }
        return {
          id: r['id'],
          name: requireClientName(r['name']),
          scope: requireHubScope(r['scope']),
          createdAt: r['createdAt'],
          tokenHash: r['tokenHash'],
        };
      });
      return new HubClients(file, clients);
    } catch (e) {
      throw new StoreError(`the MCP clients file ${file} is damaged; move it away to start with no clients`, {
        cause: e,
      });
    }
  }

  /** Creates a client; the answer holds its token, which is not kept and cannot be shown again. */
  async create(name: string, scope: HubScope): Promise<{ client: HubClientInfo; token: string }> {
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const stored: StoredClient = {
      id: randomUUID(),
      name: requireClientName(name),
      scope: requireHubScope(scope),
      createdAt: new Date().toISOString(),
      tokenHash: hashToken(token).toString('hex'),
    };
    this.#clients.push(stored);
    await this.#save();
    return { client: this.#info(stored), token };
  }

  /** Revokes a client: its token stops working at once; its memories stay until the user forgets them. */
  async revoke(id: string): Promise<void> {
    const at = this.#clients.findIndex((c) => c.id === id);
    if (at < 0) throw new NotFoundError('MCP client', id);
    this.#clients.splice(at, 1);
    this.#calls.delete(id);
    await this.#save();
  }

  /** The client a bearer token belongs to, or undefined. Every stored hash is compared, in constant time each. */
  verify(token: string): HubClientInfo | undefined {
    const presented = hashToken(token);
    let found: StoredClient | undefined;
    for (const c of this.#clients) {
      if (timingSafeEqual(presented, Buffer.from(c.tokenHash, 'hex')) && found === undefined) found = c;
    }
    return found === undefined ? undefined : this.#info(found);
  }

  /** Every client, oldest first. */
  list(): HubClientInfo[] {
    return this.#clients.map((c) => this.#info(c));
  }

  /** Notes a call for the Agents view (newest first, bounded). */
  record(id: string, what: string, ok: boolean): void {
    if (!this.#clients.some((c) => c.id === id)) return;
    const calls = this.#calls.get(id) ?? [];
    calls.unshift({ at: new Date().toISOString(), what, ok });
    calls.length = Math.min(calls.length, MAX_HUB_CALL_RECORDS);
    this.#calls.set(id, calls);
  }

  #info(c: StoredClient): HubClientInfo {
    return {
      id: c.id,
      name: c.name,
      scope: { ...c.scope },
      createdAt: c.createdAt,
      lastCalls: [...(this.#calls.get(c.id) ?? [])],
    };
  }

  /** Writes a temporary file (0600) and renames it, so a crash leaves the old or the new registry, never half of one. */
  async #save(): Promise<void> {
    const temp = `${this.#file}.tmp`;
    await writeFile(temp, `${JSON.stringify({ clients: this.#clients }, null, 2)}\n`, { mode: 0o600 });
    await rename(temp, this.#file);
  }
}
