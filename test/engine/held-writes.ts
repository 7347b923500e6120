/**
 * Holding a write open at IndexedDB, for tests of what runs while one is under
 * way. A gate stays shut until `open()`; `hold()`, awaited inside a write
 * transaction (in a write's plan, or in a DBCore middleware once the plan has
 * been applied), waits for it while keeping the transaction alive: Dexie.waitFor
 * keeps one cheap read pending meanwhile, so the store stays held as long as the
 * gate is shut.
 */
import { Dexie } from 'dexie';

/** Longest a gate holds a transaction before Dexie rolls it back. */
const HOLD_MS = 10 * 60_000;

export interface WriteGate {
  /** Inside a transaction: resolves once the gate is opened, the transaction kept alive until then. */
  hold: () => Promise<void>;
  open: () => void;
}

/** A shut gate. */
export function writeGate(): WriteGate {
  let open!: () => void;
  const shut = new Promise<void>((resolve) => (open = resolve));
  return { hold: () => Promise.resolve(Dexie.waitFor(shut, HOLD_MS)), open };
}
