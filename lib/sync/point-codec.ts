/**
 * Records as points and back. A record is what sync knows about one memory,
 * block or message: its id, version stamp and (unless it is a tombstone) its
 * fields.
 *
 * Plain (format 1), the fields are payload keys and the point id is the UUID form
 * of the record id; the server can read and change anything.
 *
 * End-to-end encrypted (format 2), the record id, fields and vector travel sealed
 * in one `sealed` field (AES-GCM), and the fields the server filters and orders on
 * stay readable: `kind`, `stamp`, `origin`, `pushSeq`, `updatedAt`, `version`,
 * `deleted`. Those are the additional data of the seal, with the point id and the
 * format, so a server that changes any of them (marks a point deleted, moves its
 * stamp, its push counter or its origin, moves a seal to another point) makes the
 * point fail to open, and it is refused. A deletion is a sealed tombstone: only a
 * key holder can make one. The point id is a keyed hash of the record id, and the
 * vector the client applies is the sealed one (with `encryptVectors` off, a copy in
 * clear is sent for the server's own search, and never read back).
 */
import { SyncError } from '../errors.js';
import type { Json } from '../store/rows.js';
import { idToUuid } from '../util/id.js';
import { SEALED_FORMAT, fromBase64, toBase64, uuidOf, type PayloadCipher } from './encryption.js';
import type { RefusalReason } from './refusals.js';
import { MAX_UPDATED_AT, stampOf } from './stamp.js';
import { FIELD, POINT_KINDS, type Payload, type PointKind, type SyncPoint } from './sync-target.js';

/** One record as sync sees it. */
export interface SyncRecord {
  kind: PointKind;
  /** The engram id: memory id, message id, or the block's record id. */
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

/** Where a point stands in its origin's pushes: what a pull cursor moves on. */
export interface PushPosition {
  origin: string;
  pushSeq: number;
}

/** A pulled point, read: its record, or why it is refused. */
export type DecodedPoint =
  | { record: SyncRecord; position: PushPosition }
  /** `position` is set when the point's origin and push counter are trustworthy (authenticated, or a plain collection). */
  | { refused: RefusalReason; detail: string; kind?: PointKind; position?: PushPosition };

const SEALED = 'sealed';
/** The payload keys of every point, plain or sealed. */
const ENVELOPE_KEYS = [FIELD.kind, FIELD.stamp, FIELD.origin, FIELD.pushSeq, 'updatedAt', 'version', 'deleted'];
const PLAIN_KEYS = new Set<string>([...ENVELOPE_KEYS, 'rid', 'body', 'vector']);
const SEALED_KEYS = new Set<string>([...ENVELOPE_KEYS, SEALED]);

/** Longest origin (device id) accepted, as for any id given to `add()`. */
const MAX_ORIGIN_CHARS = 512;

/** An id made by newId (ULID layout); other ids get a name-based UUID. */
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** The point id of a record in a plain collection: the UUID form of an engram id, or a name-based UUID for other ids. */
export async function pointIdOf(kind: PointKind, rid: string): Promise<string> {
  if (kind !== 'block' && ULID.test(rid)) return idToUuid(rid);
  return uuidOf(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`engram:${kind}:${rid}`))),
  );
}

/** The additional data of a sealed point: the format, its id and every readable field the client acts on. */
function additionalData(id: string, payload: Payload): string {
  return JSON.stringify([
    SEALED_FORMAT,
    id,
    payload[FIELD.kind],
    payload[FIELD.stamp],
    payload[FIELD.origin],
    payload[FIELD.pushSeq],
    payload['updatedAt'],
    payload['version'],
    payload['deleted'],
  ]);
}

/** A vector as base64 of its float32 values, little-endian (exact: vectors are float32 on the device). */
function vectorToBase64(vector: readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((x, i) => {
    view.setFloat32(i * 4, x, true);
  });
  return toBase64(bytes);
}

function vectorFromBase64(text: string): number[] | undefined {
  const bytes = fromBase64(text);
  if (bytes === undefined || bytes.length % 4 !== 0) return undefined;
  const view = new DataView(bytes.buffer);
  return Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

/** The point that carries `record`, pushed as number `pushSeq` of its device, sealed when a cipher is given. */
export async function encodePoint(
  record: SyncRecord,
  pushSeq: number,
  cipher: PayloadCipher | undefined,
): Promise<SyncPoint> {
  const id =
    cipher === undefined ? await pointIdOf(record.kind, record.rid) : await cipher.pointId(record.kind, record.rid);
  const payload = readablePayload(record, pushSeq);
  const point: SyncPoint = { id, payload };
  if (cipher === undefined) {
    payload['rid'] = record.rid;
    if (record.body !== undefined) payload['body'] = record.body;
    if (record.vector !== undefined) point.vector = record.vector;
    return point;
  }
  if (record.vector !== undefined && !cipher.encryptVectors) point.vector = record.vector;
  payload[SEALED] = await cipher.seal(JSON.stringify(secretOf(record)), additionalData(id, payload));
  return point;
}

/** The fields of a point the server reads (filters and orders on), sealed or not. */
function readablePayload(record: SyncRecord, pushSeq: number): Payload {
  return {
    [FIELD.kind]: record.kind,
    [FIELD.stamp]: stampOf(record.updatedAt, record.origin),
    [FIELD.origin]: record.origin,
    [FIELD.pushSeq]: pushSeq,
    updatedAt: record.updatedAt,
    version: record.version,
    deleted: record.deleted,
  };
}

/** What a sealed point seals: the record id, its fields and its vector (as base64 of float32). */
function secretOf(record: SyncRecord): Record<string, Json> {
  const secret: Record<string, Json> = { rid: record.rid };
  if (record.body !== undefined) secret['body'] = record.body;
  if (record.vector !== undefined) secret['vector'] = vectorToBase64(record.vector);
  return secret;
}

function isRecordObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** Why a point is refused, thrown by the steps of {@link decodePoint} and returned by it as a refusal. */
class PointRefused extends SyncError {
  constructor(
    readonly refused: RefusalReason,
    readonly detail: string,
    /** Set once the point's origin and push counter are trustworthy (checked, and authenticated when sealed). */
    readonly position?: PushPosition,
  ) {
    super(detail, { reason: 'incompatible' });
  }
}

/** The readable fields a client acts on, checked (as encodePoint writes them). */
interface ReadableFields {
  origin: string;
  pushSeq: number;
  updatedAt: number;
  version: number;
  deleted: boolean;
}

/**
 * The record a point carries, or why it is refused. The readable fields are checked
 * first (types and ranges: a push counter that is not a positive integer, an
 * `updatedAt` past the stamps' exact range); a sealed point then must open with the
 * key and those fields as additional data.
 */
export async function decodePoint(point: SyncPoint, cipher: PayloadCipher | undefined): Promise<DecodedPoint> {
  const kindValue = point.payload[FIELD.kind];
  const kind = (POINT_KINDS as readonly unknown[]).includes(kindValue) ? (kindValue as PointKind) : undefined;
  if (kind === undefined) {
    return { refused: 'malformed', detail: `unknown kind ${JSON.stringify(kindValue ?? null).slice(0, 40)}` };
  }
  try {
    const readable = readableFields(point.payload);
    const position: PushPosition = { origin: readable.origin, pushSeq: readable.pushSeq };
    const content =
      cipher === undefined
        ? await plainContent(point, kind, position)
        : await sealedContent(point, kind, cipher, position);
    const vector = cipher === undefined ? point.vector : content['vector'];
    return { record: recordOf(kind, readable, content, vector, position), position };
  } catch (e) {
    if (!(e instanceof PointRefused)) throw e;
    const { refused, detail, position } = e;
    return position === undefined ? { refused, detail, kind } : { refused, detail, kind, position };
  }
}

/** The readable fields of a point, checked: types, ranges, and a stamp that matches them. */
function readableFields(p: Payload): ReadableFields {
  const { updatedAt, version, deleted } = p;
  const origin = p[FIELD.origin];
  const pushSeq = p[FIELD.pushSeq];
  if (typeof origin !== 'string' || origin === '' || origin.length > MAX_ORIGIN_CHARS)
    throw new PointRefused('malformed', 'origin missing or not a device id');
  if (!isCount(pushSeq) || pushSeq < 1) throw new PointRefused('malformed', 'pushSeq is not a positive integer');
  if (!isCount(updatedAt) || updatedAt > MAX_UPDATED_AT)
    throw new PointRefused(
      'malformed',
      `updatedAt is not a time in the stamps' range (integer ms up to ${MAX_UPDATED_AT})`,
    );
  if (!isCount(version) || typeof deleted !== 'boolean')
    throw new PointRefused('malformed', 'version or deleted missing');
  if (p[FIELD.stamp] !== stampOf(updatedAt, origin))
    throw new PointRefused('malformed', 'stamp does not match updatedAt and origin');
  return { origin, pushSeq, updatedAt, version, deleted };
}

/** The first key of `p` not in `allowed`, cut to 40 characters. */
function unexpectedKey(p: Payload, allowed: ReadonlySet<string>): string | undefined {
  return Object.keys(p)
    .find((k) => !allowed.has(k))
    ?.slice(0, 40);
}

/** A plain point's content: its payload, with only the plain keys and a record id that names the point. */
async function plainContent(point: SyncPoint, kind: PointKind, position: PushPosition): Promise<Payload> {
  const p = point.payload;
  const unexpected = unexpectedKey(p, PLAIN_KEYS);
  if (unexpected !== undefined)
    throw new PointRefused(
      'malformed',
      `unexpected payload field ${unexpected} (a sealed point in a plain collection?)`,
      position,
    );
  if (typeof p['rid'] !== 'string' || (await pointIdOf(kind, p['rid'])) !== point.id)
    throw new PointRefused('malformed', 'the record id does not match the point id', position);
  return p;
}

/**
 * A sealed point's content: its seal opened with the key and the readable fields as
 * additional data, an object whose record id names the point. Until the seal opens,
 * nothing readable is trustworthy, its position included.
 */
async function sealedContent(
  point: SyncPoint,
  kind: PointKind,
  cipher: PayloadCipher,
  position: PushPosition,
): Promise<Record<string, Json>> {
  const p = point.payload;
  const unexpected = unexpectedKey(p, SEALED_KEYS);
  if (unexpected !== undefined)
    throw new PointRefused('malformed', `unexpected readable field ${unexpected} in an encrypted collection`);
  const sealed = p[SEALED];
  if (typeof sealed !== 'string')
    throw new PointRefused('malformed', 'the collection is encrypted but this point is not');
  const content = parsedObject(await opened(cipher, sealed, additionalData(point.id, p)));
  if (content === undefined) throw new PointRefused('malformed', 'sealed content is not an object', position);
  if (typeof content['rid'] !== 'string' || (await cipher.pointId(kind, content['rid'])) !== point.id)
    throw new PointRefused('malformed', 'the sealed record id does not name this point', position);
  return content;
}

/** The seal's plain text; a seal that does not open is refused as unauthenticated (no position: nothing is trusted). */
async function opened(cipher: PayloadCipher, sealed: string, additional: string): Promise<string> {
  try {
    return await cipher.open(sealed, additional);
  } catch {
    throw new PointRefused(
      'unauthenticated',
      'the seal does not open with the key and the readable fields (a field was changed, or the point forged)',
    );
  }
}

/** `text` parsed as JSON when it is an object, else undefined. */
function parsedObject(text: string): Record<string, Json> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isRecordObject(parsed) ? parsed : undefined;
}

/** The record of a point's checked fields and content: a live one with its fields and, when it has one, its vector. */
function recordOf(
  kind: PointKind,
  { origin, updatedAt, version, deleted }: ReadableFields,
  content: Record<string, unknown>,
  vector: unknown,
  position: PushPosition,
): SyncRecord {
  const record: SyncRecord = { kind, rid: content['rid'] as string, updatedAt, origin, version, deleted };
  if (deleted) return record;
  const body = content['body'];
  if (!isRecordObject(body)) throw new PointRefused('malformed', 'fields missing on a live record', position);
  record.body = body;
  if (vector === undefined) return record;
  const numbers =
    typeof vector === 'string' ? vectorFromBase64(vector) : Array.isArray(vector) ? (vector as number[]) : undefined;
  if (numbers === undefined) throw new PointRefused('malformed', 'the vector is not a list of numbers', position);
  record.vector = numbers;
  return record;
}
