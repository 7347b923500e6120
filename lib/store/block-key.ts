/**
 * The key of a core memory block: its primary key in the blocks table and its
 * record id in the change log, history and sync. Distinct owners and labels
 * always get distinct keys (agent and user ids and labels may hold any
 * character, `/` included):
 * - an agent's own block is `agentId/label` when that reads back one way only
 *   (neither holds `/` and the agent id does not start with `[`): the form
 *   stores always used, so these keys (and the sync point ids made from them)
 *   never change;
 * - any other agent's own block is the JSON array `[agentId, label]`;
 * - a user's block is the JSON array `[agentId, label, userId]`.
 * A plain key holds exactly one `/` and does not start with `[`; a JSON key
 * starts with `[` and reads back as its strings. Before schema v4 an agent's own
 * block was always `agentId/label`, so agent `team`'s label `reviewer/persona`
 * and agent `team/reviewer`'s label `persona` shared one key; the v4 upgrade
 * (schema.ts) moves such blocks to this form.
 */

/** Whether `agentId/label` names one agent and label only (see the file's comment). */
function plainReadsBack(agentId: string, label: string): boolean {
  return !agentId.includes('/') && !label.includes('/') && !agentId.startsWith('[');
}

/**
 * The key of the block `label` of `agentId`, owned by `userId` (undefined: the agent's own block).
 * @example blockKey('helper', 'human', undefined) // 'helper/human'
 * @example blockKey('team', 'reviewer/persona', undefined) // '["team","reviewer/persona"]'
 * @example blockKey('helper', 'human', 'ana') // '["helper","human","ana"]'
 */
export function blockKey(agentId: string, label: string, userId: string | undefined): string {
  if (userId !== undefined) return JSON.stringify([agentId, label, userId]);
  return plainReadsBack(agentId, label) ? `${agentId}/${label}` : JSON.stringify([agentId, label]);
}
