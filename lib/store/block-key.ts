/**
 * The key of a core memory block: its primary key in the blocks table and its
 * record id in the change log, history and sync. An agent's own block is
 * `agentId/label` (the form version 1 stores used); a user's block is the JSON
 * array `[agentId, label, userId]`, so a user's block never shares a key with
 * another user's or with the agent's own.
 */

/**
 * The key of the block `label` of `agentId`, owned by `userId` (undefined: the agent's own block).
 * @example blockKey('helper', 'human', 'ana') // '["helper","human","ana"]'
 */
export function blockKey(agentId: string, label: string, userId: string | undefined): string {
  return userId === undefined ? `${agentId}/${label}` : JSON.stringify([agentId, label, userId]);
}
