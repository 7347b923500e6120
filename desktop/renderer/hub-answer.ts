/**
 * The renderer's half of the MCP hub: answers a call the main process routed
 * here with the page's own engram, in the scope the client's token carries, so
 * agents go through the one write path and the scope rules like the app does.
 * Everything an agent stores is tagged with its agentId (the tools write in its
 * scope), which is what "forget what this client wrote" removes. No DOM.
 */
import { AgentTools } from '../../lib/agent/tools.js';
import { ValidationError, isEngramError, StoreError } from '../../lib/errors.js';
import type { Engram } from '../../lib/engram.js';
import type { BridgeResult, HubAnswer, HubCall } from '../preload/bridge-api.js';

/** Most memories one resource read lists. */
const MAX_MEMORIES = 500;

function failure(e: unknown): BridgeResult<never> {
  const error = isEngramError(e) ? e : new StoreError(e instanceof Error ? e.message : String(e), { cause: e });
  return { ok: false, error: { name: error.name, code: error.code, message: error.message } };
}

/**
 * Runs one call.
 * @example
 * bridge.onHubCall((call) => answerHubCall(engram, call))
 */
export async function answerHubCall(engram: Engram, call: HubCall): Promise<BridgeResult<HubAnswer>> {
  try {
    const { op, scope } = call;
    if (op.kind === 'tool') {
      const tools = new AgentTools(engram, scope);
      return { ok: true, value: { kind: 'tool', text: await tools.call(op.name, op.args) } };
    }
    if (!Number.isInteger(op.limit) || op.limit < 1 || op.limit > MAX_MEMORIES)
      throw new ValidationError('limit', `must be an integer from 1 to ${MAX_MEMORIES}`);
    const { results } = await engram.getAll({
      agentId: scope.agentId,
      ...(scope.userId === undefined ? {} : { userId: scope.userId }),
      limit: op.limit,
    });
    return {
      ok: true,
      value: {
        kind: 'memories',
        memories: results.map((m) => ({ id: m.id, text: m.memory, createdAt: new Date(m.createdAt).toISOString() })),
      },
    };
  } catch (e) {
    return failure(e);
  }
}

/**
 * Forgets everything a client wrote: every record of its agent in its user's
 * scope (memories, archival passages, blocks, messages, traces), from every table.
 * @example
 * await forgetHubClient(engram, client.scope)
 */
export function forgetHubClient(engram: Engram, scope: HubCall['scope']): ReturnType<Engram['forget']> {
  return engram.forget({ agentId: scope.agentId, ...(scope.userId === undefined ? {} : { userId: scope.userId }) });
}
