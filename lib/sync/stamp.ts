/**
 * The last-writer-wins order. A version's stamp is its `updatedAt` (epoch ms)
 * times 1024 plus a rank of its origin device in [0, 1024): a later write wins,
 * and two writes in the same millisecond are ordered by their devices. Stamps
 * stay exact doubles (below 2^53) until the year 2248, and fit Qdrant's int64
 * payload index, so the server can order and filter on them.
 */

/** How many origin ranks fit in one millisecond. */
export const ORIGIN_RANKS = 1024;

/**
 * The latest `updatedAt` (epoch ms, about the year 2248) whose stamp is still an
 * exact double: past it, stamps of different versions round to one number and the
 * order breaks. A pulled version stamped later is refused.
 */
export const MAX_UPDATED_AT = Math.floor(Number.MAX_SAFE_INTEGER / ORIGIN_RANKS);

/** A stable rank of a device id in [0, 1024) (FNV-1a). */
export function originRank(origin: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < origin.length; i++) {
    h ^= origin.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % ORIGIN_RANKS;
}

/** The stamp of a version made at `updatedAt` by `origin`. */
export function stampOf(updatedAt: number, origin: string): number {
  return Math.trunc(updatedAt) * ORIGIN_RANKS + originRank(origin);
}

/** One version of a record, as last-writer-wins compares them. */
export interface VersionStamp {
  updatedAt: number;
  origin: string;
  /** The record's version counter; breaks ties between two writes of one device in one millisecond. */
  version: number;
}

/** True when two versions are the same one. */
export function sameVersion(a: VersionStamp, b: VersionStamp): boolean {
  return (
    a.origin === b.origin &&
    a.version === b.version &&
    stampOf(a.updatedAt, a.origin) === stampOf(b.updatedAt, b.origin)
  );
}

/**
 * Whether a version pulled from the server replaces the local one. A later stamp
 * wins; within one stamp of one device, the higher version. Equal stamps from
 * different devices (one chance in 1024 for writes in the same millisecond) go to
 * the server's version: the server never lets an equal stamp from another device
 * overwrite it, so every device then holds the same one.
 */
export function remoteWins(remote: VersionStamp, local: VersionStamp): boolean {
  const d = stampOf(remote.updatedAt, remote.origin) - stampOf(local.updatedAt, local.origin);
  if (d !== 0) return d > 0;
  return remote.origin !== local.origin || remote.version > local.version;
}
