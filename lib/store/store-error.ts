/**
 * The one translation of an IndexedDB (Dexie) failure into a typed error: every
 * error leaving the library is an EngramError, and a store closed under a call
 * rejects with ClosedError rather than Dexie's DatabaseClosedError.
 */
import { ClosedError, EngramError, QuotaExceededError, StoreError } from '../errors.js';

/** Translates an IndexedDB failure into a typed error. */
export function storeError(e: unknown, what: string): EngramError {
  if (e instanceof EngramError) return e;
  // Dexie wraps errors whose name matches a DOMException name (NotFoundError…) in its own class.
  const wrapped = (e as { inner?: unknown }).inner;
  if (wrapped instanceof EngramError) return wrapped;
  const name = (e as { name?: unknown }).name;
  const inner = (e as { inner?: { name?: unknown } }).inner?.name;
  // The store closed under the call (close() while it ran): the typed error, not Dexie's.
  if (name === 'DatabaseClosedError' || inner === 'DatabaseClosedError') return new ClosedError();
  if (name === 'QuotaExceededError' || inner === 'QuotaExceededError') {
    return new QuotaExceededError(`${what}: the browser refused to store more data`, { cause: e });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new StoreError(`${what}: ${message}`, { cause: e });
}
