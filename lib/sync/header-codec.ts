/**
 * The collection header as a point payload, both ways. The header is written
 * once, by the first device, and checked by every device before it syncs.
 */
import { SyncError } from '../errors.js';
import { checkHeaderEncryption } from './encryption.js';
import type { CollectionHeader, Payload } from './sync-target.js';

/** The `kind` of the header point. */
export const HEADER_KIND = 'header';

/** The payload that stores `header`. */
export function headerPayload(header: CollectionHeader): Payload {
  const payload: Payload = {
    kind: HEADER_KIND,
    format: header.format,
    embedderId: header.embedderId,
    dimensions: header.dimensions,
  };
  if (header.encryption !== undefined) payload['encryption'] = { ...header.encryption };
  return payload;
}

function bad(detail: string): SyncError {
  return new SyncError(`the collection header is not one engram wrote: ${detail}`, { reason: 'incompatible' });
}

/** Reads a header payload; a payload engram could not have written is a SyncError ('incompatible'). */
export function readHeaderPayload(payload: Payload): CollectionHeader {
  if (payload['kind'] !== HEADER_KIND) throw bad('wrong kind');
  const format = payload['format'];
  if (format !== 1 && format !== 2) throw bad(`unknown format ${JSON.stringify(format ?? null)}`);
  const { embedderId, dimensions, encryption } = payload;
  if (
    typeof embedderId !== 'string' ||
    typeof dimensions !== 'number' ||
    !Number.isInteger(dimensions) ||
    dimensions < 1
  )
    throw bad('embedderId or dimensions missing');
  const header: CollectionHeader = { format, embedderId, dimensions };
  if (encryption !== undefined && encryption !== null) {
    if (typeof encryption !== 'object' || Array.isArray(encryption)) throw bad('encryption is not an object');
    header.encryption = checkHeaderEncryption(encryption);
  }
  if (format === 2 && header.encryption === undefined)
    throw bad('format 2 is for end-to-end encrypted collections, and this header has no encryption');
  return header;
}
