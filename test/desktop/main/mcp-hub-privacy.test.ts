// The MCP hub's privacy promises, driven by the SDK's Client over Streamable
// HTTP against the main process and a real engram (hub-fixture.ts): a client
// never reaches another client's scope, whatever it sends; forgetting a client
// removes its text from every table; a tool call racing a forget never brings
// the forgotten text back. Also the hub status the Agents view shows.
import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHANNELS, type HubStatus } from '../../../desktop/preload/bridge-api.js';
import { MEMORIES_URI } from '../../../desktop/main/mcp-server.js';
import { forgetHubClient } from '../../../desktop/renderer/hub-answer.js';
import { Engram } from '../../../lib/index.js';
import { HashEmbedder } from '../../../lib/embed/hash-embedder.js';
import { rawStore, tablesHolding } from '../../engine/raw-store.js';
import { callText, startHubFixture, type HubFixture } from './hub-fixture.js';

let hub: HubFixture;

beforeEach(async () => {
  hub = await startHubFixture();
});

afterEach(async () => {
  await hub.close();
});

describe('hub status (Agents view)', () => {
  it('hubStatus says the server listens, with its URL and port', async () => {
    const status = await hub.ipc<HubStatus>(CHANNELS.hubStatus);
    expect(status).toEqual({
      ok: true,
      value: { state: 'listening', url: hub.url, port: Number(new URL(hub.url).port) },
    });
  });

  it('hubStatus says why when the port is taken, and the app still starts', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const taken = await startHubFixture({ port });
    try {
      expect(taken.desktop.mcpUrl()).toBeUndefined();
      const status = await taken.ipc<HubStatus>(CHANNELS.hubStatus);
      expect(status.ok && status.value).toMatchObject({ state: 'failed', port });
      expect(status.ok && status.value.state === 'failed' ? status.value.reason : '').toMatch(
        new RegExp(`port ${port} on 127\\.0\\.0\\.1 is taken.*ENGRAM_MCP_PORT`),
      );
      // Creating a client still works (the token is good once the server listens), without a URL.
      expect((await taken.createClient('Script', { agentId: 'script' })).url).toBeUndefined();
    } finally {
      await taken.close();
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});

describe("another client's scope", () => {
  it('a client cannot name another scope: scope arguments and other resource URIs are refused, nothing leaks', async () => {
    const ana = await hub.createClient('Claude Desktop', { agentId: 'claude', userId: 'ana' });
    const bob = await hub.createClient('Cursor', { agentId: 'cursor', userId: 'bob' });
    const clientA = await hub.connect(ana.token);
    const clientB = await hub.connect(bob.token);
    await callText(clientA, 'save_to_memory', { thinking: 'health', content: ['Ana is allergic to penicillin'] });
    await callText(clientA, 'core_memory_append', { label: 'human', content: 'Ana prefers short answers' });

    // Arguments naming a scope are not part of any tool: refused, and nothing is read.
    for (const args of [
      { keywords: ['penicillin'], limit: null, userId: 'ana' },
      { keywords: ['penicillin'], limit: null, agentId: 'claude' },
      { keywords: ['penicillin'], limit: null, scope: { userId: 'ana', agentId: 'claude' } },
    ]) {
      const answer = await clientB.callTool({ name: 'recall_from_memory', arguments: args });
      expect(answer.isError).toBe(true);
      expect(JSON.stringify(answer.content)).toMatch(/unknown argument/);
      expect(JSON.stringify(answer.content)).not.toContain('penicillin');
    }
    // Every read tool in bob's scope finds nothing of ana's.
    expect(await callText(clientB, 'recall_from_memory', { keywords: ['penicillin', 'allergic'], limit: null })).toBe(
      'No memories found.',
    );
    expect(await callText(clientB, 'archival_memory_search', { query: 'penicillin', page: null })).not.toContain(
      'penicillin',
    );
    expect(await callText(clientB, 'conversation_search', { query: 'penicillin', page: null })).not.toContain(
      'penicillin',
    );
    const core = await callText(clientB, 'core_memory_replace', {
      label: 'human',
      old_content: 'Ana prefers short answers',
      new_content: 'changed by bob',
    });
    expect(core).toMatch(/^Error/);
    // The resource is the client's own memories; another URI is refused.
    await expect(clientB.readResource({ uri: `${MEMORIES_URI}?userId=ana` })).rejects.toThrow(/unknown resource/);
    expect(JSON.stringify((await clientB.readResource({ uri: MEMORIES_URI })).contents)).not.toContain('penicillin');
    // Ana's memory is untouched.
    expect(await callText(clientA, 'recall_from_memory', { keywords: ['penicillin'], limit: null })).toContain(
      'Ana is allergic to penicillin',
    );
  });
});

describe('forgetting a client', () => {
  it('forgetHubClient() removes what the client wrote from every table of the store, and nothing of others', async () => {
    const ana = await hub.createClient('Claude Desktop', { agentId: 'claude', userId: 'ana' });
    const client = await hub.connect(ana.token);
    await callText(client, 'save_to_memory', { thinking: 'fact', content: ['Ana keeps a zeppelin in Porto'] });
    await callText(client, 'archival_memory_insert', { content: 'The zeppelin is named Albatross' });
    await callText(client, 'core_memory_append', { label: 'human', content: 'Ana flies the zeppelin on Sundays' });
    await hub.engram.add('Ben keeps a bicycle', { userId: 'ben', agentId: 'claude' });
    expect(tablesHolding(await rawStore(hub.engram.name), 'zeppelin').length).toBeGreaterThan(0);

    const removed = await forgetHubClient(hub.engram, ana.client.scope);
    expect(removed.memories).toBe(2);
    expect(removed.blocks).toBeGreaterThanOrEqual(1);

    expect(tablesHolding(await rawStore(hub.engram.name), 'zeppelin')).toEqual([]);
    expect(tablesHolding(await rawStore(hub.engram.name), 'albatross')).toEqual([]);
    expect(await callText(client, 'recall_from_memory', { keywords: ['zeppelin'], limit: null })).toBe(
      'No memories found.',
    );
    expect(JSON.stringify((await hub.engram.search('zeppelin Albatross', { limit: 10 })).results)).not.toMatch(
      /zeppelin|albatross/i,
    );
    expect((await hub.engram.getAll({ agentId: 'claude' })).results.map((m) => m.memory)).toEqual([
      'Ben keeps a bicycle',
    ]);
  });

  it('a tool call racing a forget never brings the forgotten text back, not even after a reopen', async () => {
    const ana = await hub.createClient('Claude Desktop', { agentId: 'claude', userId: 'ana' });
    const client = await hub.connect(ana.token);
    const secrets = ['blue pot', 'green shed', 'old clock', 'loose brick', 'tin box'];
    // The forget starts at a different moment of the calls' round trip each round (HTTP, IPC, engram).
    for (const [round, delayMs] of [0, 1, 3, 8, 20].entries()) {
      const secret = secrets[round] ?? '';
      await callText(client, 'save_to_memory', { thinking: 'fact', content: [`Ana hides a key under the ${secret}`] });
      const recalls = Array.from({ length: 4 }, () =>
        callText(client, 'recall_from_memory', { keywords: [secret, 'key'], limit: null }),
      );
      const write = callText(client, 'save_to_memory', {
        thinking: 'fact',
        content: [`Ana owns kayak number ${round}`],
      });
      const forgot = new Promise((resolve) => setTimeout(resolve, delayMs)).then(() =>
        forgetHubClient(hub.engram, ana.client.scope),
      );
      const [, written] = await Promise.all([forgot, write, ...recalls]);
      expect(written).toMatch(/sav/i);

      // The forgotten text is gone from every table, from search, and from the tools.
      const raw = await rawStore(hub.engram.name);
      expect(tablesHolding(raw, secret), `round ${round}`).toEqual([]);
      expect(await callText(client, 'recall_from_memory', { keywords: [secret, 'key'], limit: null })).not.toContain(
        secret,
      );
      expect(JSON.stringify((await hub.engram.search(`key under the ${secret}`, { limit: 20 })).results)).not.toContain(
        secret,
      );
      // The racing write either landed whole (after the forget) or not at all (before it): never half.
      const kayak = `kayak number ${round}`;
      const found = (await hub.engram.search(kayak, { mode: 'keyword', limit: 20 })).results.filter((r) =>
        r.memory.includes(kayak),
      ).length;
      const landed = raw['memories']?.includes(kayak) === true;
      expect({ found, tables: landed ? [] : tablesHolding(raw, kayak) }, `round ${round}`).toEqual({
        found: landed ? 1 : 0,
        tables: [],
      });
    }

    // A reopen restores the index from its snapshot and replays the change log: still gone.
    const name = hub.engram.name;
    await hub.engram.close();
    const reopened = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 64 }) });
    try {
      for (const secret of secrets) {
        expect(JSON.stringify((await reopened.search(`key under the ${secret}`, { limit: 20 })).results)).not.toContain(
          secret,
        );
      }
      expect(tablesHolding(await rawStore(name), 'hides a key')).toEqual([]);
    } finally {
      await reopened.close();
    }
  });
});
