/**
 * Records as points and back. A record is what sync knows about one memory,
 * block or message: its id, version stamp and (unless it is a tombstone) its
 * fields. Plain, the fields are payload keys; encrypted, they travel sealed in
 * one `sealed` field and only `kind`, `stamp`, `origin`, `pushSeq`, `updatedAt`,
 * `version` and `deleted` stay readable, because the server filters and orders on them.
 */
import { SyncError } from '../errors.js';
import type { Json } from '../store/rows.js';
import { idToUuid } from '../util/id.js';
import type { PayloadCipher } from './encryption.js';
import { stampOf } from './stamp.js';
import { FIELD, POINT_KINDS, type Payload, type PointKind, type SyncPoint } from './sync-target.js';

/** One record as sync sees it. */
export interface SyncRecord {
  kind: PointKind;
  /** The engram id: memory id, message id, or `agentId/label` of a block. */
  rid: string;
  updatedAt: number;
  /** Device that made this version. */
  origin: string;
  version: number;
  deleted: boolean;
  /** The record's fields; absent on a tombstone. */
  body?: Record<string, Json>;
  /** The memory's vector, when it has one. */
  vector?: number[];
}

const SEALED = 'sealed';
const PLAIN_KEYS = new Set<string>([FIELD.kind, FIELD.stamp, FIELD.origin, FIELD.pushSeq, 'updatedAt', 'version', 'deleted', 'rid', 'body', 'vector', SEALED]);

/** An id made by newId (ULID layout); other ids get a name-based UUID. */
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** The point id of a record: the UUID form of an engram id, or a name-based UUID for other ids. */
export async function pointIdOf(kind: PointKind, rid: string): Promise<string> {
  if (kind !== 'block' && ULID.test(rid)) return idToUuid(rid);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`engram:${kind}:${rid}`)));
  const b = digest.subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80; // version 8: a custom, name-based UUID
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The point that carries `record`, pushed as number `pushSeq` of its device, its fields sealed when a cipher is given. */
export async function encodePoint(record: SyncRecord, pushSeq: number, cipher: PayloadCipher | undefined): Promise<SyncPoint> {
  const id = await pointIdOf(record.kind, record.rid);
  const payload: Payload = {
    [FIELD.kind]: record.kind,
    [FIELD.stamp]: stampOf(record.updatedAt, record.origin),
    [FIELD.origin]: record.origin,
    [FIELD.pushSeq]: pushSeq,
    updatedAt: record.updatedAt,
    version: record.version,
    deleted: record.deleted,
  };
  const secret: Record<string, Json> = { rid: record.rid };
  if (record.body !== undefined) secret['body'] = record.body;
  const point: SyncPoint = { id, payload };
  if (cipher === undefined) {
    Object.assign(payload, secret);
    if (record.vector !== undefined) point.vector = record.vector;
    return point;
  }
  if (record.vector !== undefined) {
    if (cipher.encryptVectors) secret['vector'] = record.vector;
    else point.vector = record.vector;
  }
  payload[SEALED] = await cipher.seal(JSON.stringify(secret), id);
  return point;
}

function bad(id: string, detail: string): SyncError {
  return new SyncError(`point ${id} is not one engram wrote: ${detail}`, { reason: 'incompatible' });
}

function isRecordObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The record a point carries. A sealed point needs the cipher; a plain point in an encrypted collection is refused. */
export async function decodePoint(point: SyncPoint, cipher: PayloadCipher | undefined): Promise<SyncRecord> {
  const p = point.payload;
  const kind = p[FIELD.kind];
  if (typeof kind !== 'string' || !(POINT_KINDS as readonly string[]).includes(kind)) throw bad(point.id, `unknown kind ${JSON.stringify(kind ?? null)}`);
  const { updatedAt, version, deleted } = p;
  const origin = p[FIELD.origin];
  if (typeof updatedAt !== 'number' || typeof version !== 'number' || typeof deleted !== 'boolean' || typeof origin !== 'string') {
    throw bad(point.id, 'updatedAt, version, deleted or origin missing');
  }
  let secret: Record<string, unknown> = p;
  const sealed = p[SEALED];
  if (cipher !== undefined) {
    if (typeof sealed !== 'string') throw bad(point.id, 'the collection is encrypted but this point is not');
    const parsed: unknown = JSON.parse(await cipher.open(sealed, point.id));
    if (!isRecordObject(parsed)) throw bad(point.id, 'sealed content is not an object');
    secret = parsed;
  } else {
    if (sealed !== undefined) throw new SyncError(`point ${point.id} is encrypted: pass encryption: { passphrase }`, { reason: 'wrong-passphrase' });
    for (const k of Object.keys(p)) if (!PLAIN_KEYS.has(k)) throw bad(point.id, `unexpected payload field ${k}`);
  }
  const { rid, body } = secret;
  if (typeof rid !== 'string') throw bad(point.id, 'record id missing');
  if ((await pointIdOf(kind as PointKind, rid)) !== point.id) throw bad(point.id, 'record id does not match the point id');
  const record: SyncRecord = { kind: kind as PointKind, rid, updatedAt, origin, version, deleted };
  if (!deleted) {
    if (!isRecordObject(body)) throw bad(point.id, 'fields missing on a live record');
    record.body = body;
  }
  const vector = cipher?.encryptVectors === true ? secret['vector'] : point.vector;
  if (Array.isArray(vector) && !deleted) record.vector = vector as number[];
  return record;
}
