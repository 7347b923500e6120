/**
 * Scope: the owner fields of a row (memory, message, block, trace), and the one
 * family of scope types. `Scope` may hold any of them; each narrower scope is a
 * `Pick` of it named by a field list beside it, so a type and the keys that check
 * it (a face's `scopeSpec(…)`) come from one place.
 */

/** Scope fields, in the order an index lookup prefers them. */
export const SCOPE_FIELDS = ['userId', 'agentId', 'runId', 'projectId', 'sessionId'] as const;
export type ScopeField = (typeof SCOPE_FIELDS)[number];

/** Values of scope fields: a row is in a scope when it holds every value given. */
export type Scope = { [K in ScopeField]?: string };

/** Who a long-term memory belongs to, in mem0's words. */
export const MEMORY_SCOPE_FIELDS = ['userId', 'agentId', 'runId'] as const satisfies readonly ScopeField[];
/** Who a memory belongs to: a user, an agent and a run, any of them. */
export type MemoryScope = Pick<Scope, (typeof MEMORY_SCOPE_FIELDS)[number]>;

/** Whose data `engram.forget()` removes. */
export const FORGET_SCOPE_FIELDS = ['userId', 'agentId', 'runId', 'projectId'] as const satisfies readonly ScopeField[];
/** Whose data to forget: every given field must match (at least one is given). */
export type ForgetScope = Pick<Scope, (typeof FORGET_SCOPE_FIELDS)[number]>;

/** Who agent tools act for. */
export const TOOLS_SCOPE_FIELDS = ['agentId', 'userId'] as const satisfies readonly ScopeField[];
