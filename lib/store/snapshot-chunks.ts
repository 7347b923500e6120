/**
 * Large snapshot bytes in `meta`, stored in chunks. Chromium's IndexedDB never
 * answers a put of one value of about 128 MB or more: no error, the transaction
 * just never completes (measured: bench/results/REPORT.md, "Measurements cited by the code"). An
 * HNSW snapshot of 100k 384-d vectors is about 170 MB, so a record's `bytes`
 * above {@link SNAPSHOT_CHUNK_BYTES} go into rows `<key>:0`, `<key>:1`, … beside
 * the record, written and read in one transaction with it.
 */
import { toBase64 } from '../util/web-crypto.js';
import { PreSealedBytes, type RowSealing } from './row-sealing.js';
import type { MetaRow } from './rows.js';
import type { EngramDb } from './schema.js';
import { decodeValue, encodeValue } from './value-codec.js';

/**
 * In an encrypted store, the field of the stored head that names its sealed bytes. The whole
 * record (index bytes, unmerged vectors, scope table) is encoded (value-codec.ts) and sealed
 * here with WebCrypto (row-sealing.ts `sealBulk`: native AES-GCM, several times the row
 * cipher's speed on the hundreds of MB of a large index) before the transaction, opened after
 * it, and always kept in chunk rows, which the row sealing stores as they are; the head (chunk
 * count, length, the tag) is sealed as any row. A fresh tag per snapshot is bound into the
 * seal, so chunks of an older snapshot do not open with a newer head.
 */
const BULK_TAG = 'bulkTag';
const BULK_TAG_BYTES = 12;
/**
 * The field of the head that counts its sealed pieces: the record is sealed in pieces of
 * {@link SEALED_PIECE_BYTES}, one per chunk row, each bound to its place (`i` of `count`), so a
 * piece is opened as soon as its row is read, while the next ones are (heads without it: the
 * record sealed whole, opened once every chunk has arrived).
 */
const BULK_PIECES = 'bulkPieces';
/**
 * The fields of a head whose record is sealed in two parts (heads without them: the whole record
 * encoded, then cut into pieces): first the record without `bytes`, encoded (value-codec.ts), in
 * `bulkFields` pieces, then `bytes` as they are, `bulkBytes` long, in pieces of `bulkPieceBytes`.
 * The fields are opened and handed to the reader (`whileReading`: the scope table is made from
 * them) while the bytes' pieces are still read, and each bytes piece is put into place as it
 * opens, so nothing is joined after the last one arrives. `bulkBytes` is absent for a record
 * without `bytes` (the keyword snapshot).
 */
const BULK_FIELDS = 'bulkFields';
const BULK_BYTES = 'bulkBytes';
const BULK_PIECE_BYTES = 'bulkPieceBytes';
export const SEALED_PIECE_BYTES = 4 * 2 ** 20;

function bulkName(key: string, tag: string): string {
  return `${key}\u0000${tag}`;
}

function pieceName(key: string, tag: string, i: number, count: number): string {
  return `${bulkName(key, tag)}\u0000${i}/${count}`;
}

/** A piece's name in a record sealed in two parts: the split is bound in too, so no piece of another layout opens here. */
function partedPieceName(key: string, tag: string, i: number, count: number, fieldPieces: number): string {
  return `${pieceName(key, tag, i, count)}\u0000f${fieldPieces}`;
}

/** Largest `bytes` kept inline in the record; larger ones are split into chunks of this size (the default of putSnapshot's `chunkBytes`). */
export const SNAPSHOT_CHUNK_BYTES = 32 * 2 ** 20;

/**
 * The `meta` row beside the snapshot under `key` that holds its log position:
 * log compaction (change-log.ts) reads this number, not the record, which at
 * 100k memories is megabytes (its scope table, the unmerged vectors). It lies
 * in the snapshot's key range, so {@link deleteSnapshot} takes it along.
 */
export function snapshotPositionRow(key: string, seq: number): { key: string; value: number } {
  return { key: snapshotPositionKey(key), value: seq };
}

/** The key of {@link snapshotPositionRow}. */
export function snapshotPositionKey(key: string): string {
  return `${key}:seq`;
}

/** How a chunked record stands in `meta`: the record without `bytes`, and where they are. */
interface ChunkedRecord {
  chunks: number;
  byteLength: number;
}

function chunkKeys(key: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${key}:${i}`);
}

/** Deletes the rows of a chunked record (`<key>:…`), not the record itself. */
async function deleteChunks(db: EngramDb, key: string): Promise<void> {
  await db.meta.where('key').between(`${key}:`, `${key}:\uffff`).delete();
}

/**
 * A snapshot record in the form it is stored: in an encrypted store the record encoded and
 * sealed whole with WebCrypto (asynchronous: made before the transaction that writes it).
 */
export interface PreparedSnapshot {
  key: string;
  stored: Record<string, unknown>;
}

/**
 * `record` ready to be written under `key` by {@link writeSnapshot}: as it is in a plain store,
 * sealed in an encrypted one (see BULK_TAG). Outside any transaction (WebCrypto would end it).
 */
export async function prepareSnapshot(
  db: EngramDb,
  key: string,
  record: Record<string, unknown>,
  pieceBytes = SEALED_PIECE_BYTES,
): Promise<PreparedSnapshot> {
  const { sealing } = db;
  if (sealing === undefined) return { key, stored: record };
  const tag = toBase64(crypto.getRandomValues(new Uint8Array(BULK_TAG_BYTES)));
  const { bytes, ...rest } = record;
  const withBytes = bytes instanceof Uint8Array;
  // The fields first, encoded; `bytes` after them as they are (no copy into one encoding: see BULK_FIELDS).
  const fields = encodeValue(withBytes ? rest : record);
  const parts = [fields, ...(withBytes ? [bytes] : [])];
  const fieldPieces = Math.max(1, Math.ceil(fields.length / pieceBytes));
  const bytesPieces = withBytes ? Math.ceil(bytes.length / pieceBytes) : 0;
  const count = fieldPieces + bytesPieces;
  const cut = (i: number): Uint8Array<ArrayBuffer> => {
    const [part, at] = i < fieldPieces ? [parts[0]!, i] : [parts[1]!, i - fieldPieces];
    return part.subarray(at * pieceBytes, (at + 1) * pieceBytes) as Uint8Array<ArrayBuffer>;
  };
  const pieces = await Promise.all(
    Array.from({ length: count }, (_, i) => sealing.sealBulk(cut(i), partedPieceName(key, tag, i, count, fieldPieces))),
  );
  return {
    key,
    stored: {
      pieces,
      [BULK_TAG]: tag,
      [BULK_PIECES]: count,
      [BULK_FIELDS]: fieldPieces,
      [BULK_PIECE_BYTES]: pieceBytes,
      ...(withBytes ? { [BULK_BYTES]: bytes.length } : {}),
      ...(typeof record['seq'] === 'number' ? { seq: record['seq'] } : {}),
    },
  };
}

/**
 * Writes a prepared snapshot, its `bytes` in chunks when large (always, sealed), replacing any
 * chunks an earlier record left, and its log position (`seq`) in a small row beside it for log
 * compaction (change-log.ts). Joins the caller's transaction on `meta` when there is one.
 */
export async function writeSnapshot(
  db: EngramDb,
  prepared: PreparedSnapshot,
  chunkBytes = SNAPSHOT_CHUNK_BYTES,
): Promise<void> {
  await db.transaction('rw', db.meta, async () => {
    await deleteChunks(db, prepared.key);
    await db.meta.bulkPut(snapshotRows(prepared, db.sealing !== undefined, chunkBytes));
  });
}

/**
 * The `meta` rows that hold a prepared snapshot (`sealed`: prepared for an encrypted store), as
 * {@link writeSnapshot} puts them once older chunks are gone: the position row, the record or its
 * head, the chunk rows. For a writer that cannot use writeSnapshot's transaction (a store
 * conversion's upgrade, engine/store-conversion.ts), which starts with no rows under the key.
 */
export function snapshotRows(
  prepared: PreparedSnapshot,
  sealed: boolean,
  chunkBytes = SNAPSHOT_CHUNK_BYTES,
): MetaRow[] {
  const { key, stored } = prepared;
  const rows: MetaRow[] = [];
  if (typeof stored['seq'] === 'number') rows.push(snapshotPositionRow(key, stored['seq']));
  const { bytes, pieces } = stored;
  if (sealed && Array.isArray(pieces)) rows.push(...pieceRows(key, stored, pieces as Uint8Array[]));
  else if (!sealed && (!(bytes instanceof Uint8Array) || bytes.length <= chunkBytes)) rows.push({ key, value: stored });
  else if (!(bytes instanceof Uint8Array)) throw new TypeError('a sealed snapshot has its bytes');
  else rows.push(...chunkRows(key, stored, bytes, { sealed, chunkBytes }));
  return rows;
}

/** A snapshot sealed in pieces (prepareSnapshot): its head, and one chunk row for each piece, stored as it is. */
function pieceRows(key: string, stored: Record<string, unknown>, pieces: readonly Uint8Array[]): MetaRow[] {
  const rest: Record<string, unknown> = { ...stored };
  delete rest['pieces'];
  const keys = chunkKeys(key, pieces.length);
  const byteLength = pieces.reduce((sum, p) => sum + p.length, 0);
  return [
    { key, value: { ...rest, chunks: keys.length, byteLength } },
    ...keys.map((k, i) => ({ key: k, value: new PreSealedBytes(pieces[i]!) })),
  ];
}

/** A snapshot's `bytes` cut in chunks of `chunkBytes` (each to be sealed, when `sealed`), after its head. */
function chunkRows(
  key: string,
  stored: Record<string, unknown>,
  bytes: Uint8Array,
  { sealed, chunkBytes }: { sealed: boolean; chunkBytes: number },
): MetaRow[] {
  const rest: Record<string, unknown> = { ...stored };
  delete rest['bytes'];
  const keys = chunkKeys(key, Math.ceil(bytes.length / chunkBytes));
  const head: ChunkedRecord & Record<string, unknown> = { ...rest, chunks: keys.length, byteLength: bytes.length };
  // slice(), not subarray(): a view is cloned with its whole buffer.
  const chunk = (i: number): Uint8Array | PreSealedBytes => {
    const part = bytes.slice(i * chunkBytes, (i + 1) * chunkBytes);
    return sealed ? new PreSealedBytes(part) : part;
  };
  return [{ key, value: head }, ...keys.map((k, i) => ({ key: k, value: chunk(i) }))];
}

/**
 * Writes `record` under `key` ({@link prepareSnapshot}, then {@link writeSnapshot}). Not inside
 * a transaction of the caller's in an encrypted store (the sealing awaits WebCrypto).
 * @example
 * await putSnapshot(db, 'indexSnapshot', { bytes, seq: 12 });
 */
export async function putSnapshot(
  db: EngramDb,
  key: string,
  record: { bytes: Uint8Array } & Record<string, unknown>,
  chunkBytes = SNAPSHOT_CHUNK_BYTES,
): Promise<void> {
  await writeSnapshot(db, await prepareSnapshot(db, key, record, Math.min(chunkBytes, SEALED_PIECE_BYTES)), chunkBytes);
}

/**
 * The buffer for `byteLength` bytes written as `chunks` chunks of `chunkLength`
 * (the first's length; the last may be shorter), or undefined when they cannot
 * be: a head that claims more bytes than its chunks hold is damaged, and no
 * buffer is allocated for it.
 */
function allocate(byteLength: number, chunks: number, chunkLength: number): Uint8Array | undefined {
  if (chunkLength < 1 || Math.ceil(byteLength / chunkLength) !== chunks) return undefined;
  try {
    return new Uint8Array(byteLength);
  } catch {
    return undefined; // a length no buffer can have
  }
}

/**
 * The value stored under `key` with chunked `bytes` joined again; undefined when
 * there is none. A chunked record whose chunks are missing or of the wrong size
 * comes back without `bytes` (the caller treats it as damaged).
 * `whileReading` (which must not throw) gets the record's other fields while
 * its chunks are read, so that work on them overlaps the read of the bytes, in
 * which the page is idle (its length at 100k: bench/results/REPORT.md, "Measurements cited by the code").
 * @example
 * const row = await getSnapshot(db, 'indexSnapshot', (fields) => prepare(fields));
 */
export async function getSnapshot(
  db: EngramDb,
  key: string,
  whileReading?: (fields: Readonly<Record<string, unknown>>) => void,
): Promise<{ value: unknown } | undefined> {
  const { sealing } = db;
  if (sealing === undefined) return readSnapshot(db, key, whileReading);
  const opener = new SealedPieceOpener(key, sealing, whileReading);
  const row = await readSnapshot(db, key, undefined, opener);
  const value = row?.value;
  if (row === undefined || typeof value !== 'object' || value === null) return row;
  const damaged = (): { value: unknown } => {
    sealing.onDamaged({ table: 'meta', key, reason: 'the snapshot does not open (changed, moved or cut)' });
    return { value: {} };
  };
  if (row.opened !== undefined && opener.parted !== undefined) {
    // Its fields were handed to whileReading as soon as they opened; the bytes are in place.
    await Promise.all(row.opened);
    const record = opener.parted.record();
    return record === undefined ? damaged() : { value: record };
  }
  const { [BULK_TAG]: tag, bytes } = value as Record<string, unknown>;
  // A record written as a sealed row (a keyword snapshot before it was sealed whole): its row seal checked it.
  if (tag === undefined && bytes === undefined) return row;
  // An encrypted store's record: opened now, after the transaction (WebCrypto would have ended it).
  const record = await openSealedWhole(sealing, key, value as Record<string, unknown>, row.opened);
  if (record === undefined) return damaged();
  const fields: Record<string, unknown> = { ...record };
  delete fields['bytes'];
  whileReading?.(fields);
  return { value: record };
}

/**
 * Opens an encrypted store's snapshot piece by piece as its chunk rows are read, for a head
 * sealed in pieces, one per chunk row (heads without a count: sealed whole, opened once joined).
 * A record sealed in two parts (see BULK_FIELDS) is put together in `parted` as its pieces open.
 */
class SealedPieceOpener implements ChunkOpener {
  readonly #key: string;
  readonly #sealing: RowSealing;
  readonly #whileReading: ((fields: Readonly<Record<string, unknown>>) => void) | undefined;
  /** The record sealed in two parts, once its first piece has arrived. */
  parted: PartedRecord | undefined;

  constructor(
    key: string,
    sealing: RowSealing,
    whileReading: ((fields: Readonly<Record<string, unknown>>) => void) | undefined,
  ) {
    this.#key = key;
    this.#sealing = sealing;
    this.#whileReading = whileReading;
  }

  accepts(fields: Readonly<Record<string, unknown>>): boolean {
    return typeof fields[BULK_TAG] === 'string' && fields[BULK_PIECES] === fields['chunks'];
  }

  /** Opens piece `i` as its row arrives: WebCrypto works beside the reads of the next ones. */
  open(fields: Readonly<Record<string, unknown>>, i: number, chunk: Uint8Array): Promise<Uint8Array | undefined> {
    if (fields[BULK_FIELDS] !== undefined) {
      this.parted ??= new PartedRecord(this.#key, fields, this.#whileReading);
      return this.parted.open(this.#sealing, i, chunk);
    }
    const name = pieceName(this.#key, fields[BULK_TAG] as string, i, fields[BULK_PIECES] as number);
    return this.#sealing.openBulk(chunk as Uint8Array<ArrayBuffer>, name);
  }
}

/**
 * A record sealed whole, decoded: from its pieces opened as they were read (`opened`), or
 * from its joined `bytes` opened now. Undefined when it does not open or is not a record.
 */
async function openSealedWhole(
  sealing: RowSealing,
  key: string,
  head: Readonly<Record<string, unknown>>,
  opened: readonly Promise<Uint8Array | undefined>[] | undefined,
): Promise<object | undefined> {
  const { [BULK_TAG]: tag, bytes } = head;
  const plain = opened
    ? await joinPieces(opened)
    : bytes instanceof Uint8Array && typeof tag === 'string'
      ? await sealing.openBulk(bytes as Uint8Array<ArrayBuffer>, bulkName(key, tag))
      : undefined;
  let record: unknown;
  try {
    record = plain === undefined ? undefined : decodeValue(plain);
  } catch {
    record = undefined;
  }
  return typeof record === 'object' && record !== null ? record : undefined;
}

const isCount = (n: unknown, least: number): n is number => Number.isSafeInteger(n) && (n as number) >= least;

/**
 * A record sealed in two parts (see BULK_FIELDS), put together as its pieces open: the fields
 * decoded and handed to `whileReading` once their pieces have opened, each bytes piece copied
 * into its place in the record's `bytes` as it opens. Any piece that does not open, or a layout
 * the head does not add up to, leaves no record.
 */
class PartedRecord {
  readonly #key: string;
  readonly #tag: string;
  readonly #count: number;
  readonly #fieldPieces: number;
  readonly #pieceBytes: number;
  /** The length of `bytes`, undefined for a record without them. */
  readonly #bytesLength: number | undefined;
  readonly #whileReading: ((fields: Readonly<Record<string, unknown>>) => void) | undefined;
  readonly #fieldParts: (Uint8Array | undefined)[] = [];
  #fieldsLeft: number;
  #fields: Record<string, unknown> | undefined;
  #bytes: Uint8Array | undefined;
  /** Pieces opened and in place so far. */
  #opened = 0;
  #failed = false;

  constructor(
    key: string,
    head: Readonly<Record<string, unknown>>,
    whileReading: ((fields: Readonly<Record<string, unknown>>) => void) | undefined,
  ) {
    this.#key = key;
    this.#tag = head[BULK_TAG] as string;
    this.#count = head[BULK_PIECES] as number;
    const fieldPieces = head[BULK_FIELDS];
    const pieceBytes = head[BULK_PIECE_BYTES];
    const bytesLength = head[BULK_BYTES];
    this.#fieldPieces = isCount(fieldPieces, 1) ? fieldPieces : 0;
    this.#pieceBytes = isCount(pieceBytes, 1) ? pieceBytes : 0;
    this.#bytesLength = isCount(bytesLength, 0) ? bytesLength : undefined;
    this.#fieldsLeft = this.#fieldPieces;
    this.#whileReading = whileReading;
    const bytesPieces = this.#bytesLength === undefined ? 0 : Math.ceil(this.#bytesLength / this.#pieceBytes);
    // The head is sealed and checked, so this holds unless it was written wrong.
    this.#failed =
      this.#fieldPieces === 0 ||
      this.#pieceBytes === 0 ||
      (bytesLength !== undefined && this.#bytesLength === undefined) ||
      this.#fieldPieces + bytesPieces !== this.#count;
  }

  /** Opens piece `i` and puts it into place; resolves to it (undefined when it does not open). */
  async open(sealing: RowSealing, i: number, chunk: Uint8Array): Promise<Uint8Array | undefined> {
    if (this.#failed) return undefined;
    const name = partedPieceName(this.#key, this.#tag, i, this.#count, this.#fieldPieces);
    const piece = await sealing.openBulk(chunk as Uint8Array<ArrayBuffer>, name);
    const placed =
      piece !== undefined &&
      (i < this.#fieldPieces ? this.#fieldPiece(i, piece) : this.#bytesPiece(i - this.#fieldPieces, piece));
    if (!placed) {
      this.#failed = true;
      return undefined;
    }
    this.#opened++;
    return piece;
  }

  /** Keeps a piece of the fields; decodes them once all have opened and hands them to whileReading. False when they do not decode. */
  #fieldPiece(i: number, piece: Uint8Array): boolean {
    this.#fieldParts[i] = piece;
    if (--this.#fieldsLeft > 0) return true;
    const parts = this.#fieldParts as Uint8Array[];
    const joined = parts.length === 1 ? parts[0]! : new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    if (parts.length > 1) parts.reduce((at, p) => (joined.set(p, at), at + p.length), 0);
    let fields: unknown;
    try {
      fields = decodeValue(joined);
    } catch {
      return false;
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields) || 'bytes' in fields) return false;
    this.#fields = fields as Record<string, unknown>;
    // The scope table is made from these while the bytes' pieces are still read and opened.
    this.#whileReading?.({ ...this.#fields });
    return true;
  }

  /** Copies bytes piece `j` into its place. False when it is not of its place's length, or no buffer can be had. */
  #bytesPiece(j: number, piece: Uint8Array): boolean {
    const total = this.#bytesLength!;
    const at = j * this.#pieceBytes;
    if (piece.length !== Math.min(this.#pieceBytes, total - at)) return false;
    if (this.#bytes === undefined) {
      try {
        this.#bytes = new Uint8Array(total);
      } catch {
        return false; // a length no buffer can have
      }
    }
    this.#bytes.set(piece, at);
    return true;
  }

  /** The record once every piece has opened; undefined when one did not, or the layout does not add up. */
  record(): Record<string, unknown> | undefined {
    if (this.#failed || this.#fields === undefined || this.#opened !== this.#count) return undefined;
    if (this.#bytesLength === undefined) return this.#fields;
    return { ...this.#fields, bytes: this.#bytes ?? new Uint8Array(0) };
  }
}

/** The pieces opened one by one, joined; undefined when one does not open. */
async function joinPieces(opening: readonly Promise<Uint8Array | undefined>[]): Promise<Uint8Array | undefined> {
  const pieces = await Promise.all(opening);
  if (pieces.some((p) => p === undefined)) return undefined;
  const out = new Uint8Array(pieces.reduce((sum, p) => sum + p!.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p!, at);
    at += p!.length;
  }
  return out;
}

/** Opens each chunk of a record whose head it accepts (sealed pieces) as the chunk arrives. */
interface ChunkOpener {
  accepts(fields: Readonly<Record<string, unknown>>): boolean;
  open(fields: Readonly<Record<string, unknown>>, i: number, chunk: Uint8Array): Promise<Uint8Array | undefined>;
}

/**
 * The record under `key` with its chunks joined, as stored (sealed bytes in an encrypted store);
 * with `openChunk`, a record whose chunks it opens one by one comes back with those openings
 * (`opened`, in order) instead of joined bytes.
 */
async function readSnapshot(
  db: EngramDb,
  key: string,
  whileReading?: (fields: Readonly<Record<string, unknown>>) => void,
  openChunk?: ChunkOpener,
): Promise<{ value: unknown; opened?: Promise<Uint8Array | undefined>[] } | undefined> {
  return db.transaction('r', db.meta, async () => {
    const row = await db.meta.get(key);
    if (row === undefined) return undefined;
    const value: unknown = row.value;
    if (typeof value !== 'object' || value === null || !('chunks' in value)) return { value };
    const { chunks, byteLength, ...rest } = value as ChunkedRecord & Record<string, unknown>;
    if (!(await chunksAddUp(db, key, chunks, byteLength))) return { value: rest };
    if (openChunk?.accepts(value) === true)
      return { value: rest, opened: await openChunks(db, key, value, chunks, openChunk) };
    const bytes = await joinChunks(db, key, chunks, byteLength, () => whileReading?.(rest));
    return bytes === undefined ? { value: rest } : { value: { ...rest, bytes } };
  });
}

/**
 * Whether a head's `chunks` and `byteLength` can be true of what is stored beside it. Every chunk
 * holds at least one byte, and every one is a row beside the record: a head that claims more
 * (400,000 chunks of a 40 KB snapshot) is damaged, found by counting keys, before a chunk is asked for.
 */
async function chunksAddUp(db: EngramDb, key: string, chunks: number, byteLength: number): Promise<boolean> {
  if (!Number.isSafeInteger(chunks) || chunks < 1 || !Number.isSafeInteger(byteLength) || chunks > byteLength)
    return false;
  return (await db.meta.where('key').between(`${key}:`, `${key}:\uffff`).count()) >= chunks;
}

/**
 * The `chunks` chunk rows of `key` read and joined into `byteLength` bytes (inside the caller's
 * transaction); undefined when they do not make those bytes. `whileReading` runs once every chunk
 * has been asked for. Requests in one transaction are answered in the order they were made: each
 * chunk is copied into place as it arrives, while the next ones are read (joining them after the
 * last cost more: bench/results/REPORT.md).
 */
async function joinChunks(
  db: EngramDb,
  key: string,
  chunks: number,
  byteLength: number,
  whileReading: () => void,
): Promise<Uint8Array | undefined> {
  const joined = new ChunkJoin(chunks, byteLength);
  const reading = Promise.all(
    chunkKeys(key, chunks).map((chunkKey, i) =>
      db.meta.get(chunkKey).then((part) => {
        joined.add(i, part?.value);
      }),
    ),
  );
  whileReading();
  await reading;
  return joined.bytes();
}

/**
 * Chunks copied into one buffer as they arrive, in order. Any chunk out of order, not bytes, past
 * `byteLength`, or (but the last) of another length than the first leaves no bytes.
 */
class ChunkJoin {
  readonly #chunks: number;
  readonly #byteLength: number;
  /** Allocated when the first chunk arrives: its length is the chunk size, which with `chunks` bounds byteLength. */
  #bytes: Uint8Array | undefined;
  #chunkLength = 0;
  #offset = 0;
  #arrived = 0;
  #whole = true;

  constructor(chunks: number, byteLength: number) {
    this.#chunks = chunks;
    this.#byteLength = byteLength;
  }

  /** Copies chunk `i` (a row's value) into place. */
  add(i: number, chunk: unknown): void {
    if (!this.#whole || i !== this.#arrived++ || !(chunk instanceof Uint8Array) || !this.#place(i, chunk))
      this.#whole = false;
  }

  /** The joined bytes; undefined unless every chunk arrived whole and they fill `byteLength`. */
  bytes(): Uint8Array | undefined {
    return this.#whole && this.#offset === this.#byteLength ? this.#bytes : undefined;
  }

  /** Copies `chunk` to its place; false when it does not fit there. */
  #place(i: number, chunk: Uint8Array): boolean {
    if (this.#offset + chunk.length > this.#byteLength) return false;
    if (this.#bytes === undefined) {
      this.#chunkLength = chunk.length;
      this.#bytes = allocate(this.#byteLength, this.#chunks, chunk.length);
    }
    // Every chunk but the last is as long as the first.
    if (this.#bytes === undefined || (i < this.#chunks - 1 && chunk.length !== this.#chunkLength)) return false;
    this.#bytes.set(chunk, this.#offset);
    this.#offset += chunk.length;
    return true;
  }
}

/** Each chunk of `key` handed to `openChunk` as it arrives (in one transaction); a missing chunk is an undefined opening. */
function openChunks(
  db: EngramDb,
  key: string,
  fields: Readonly<Record<string, unknown>>,
  chunks: number,
  openChunk: ChunkOpener,
): Promise<Promise<Uint8Array | undefined>[]> {
  return Promise.all(
    chunkKeys(key, chunks).map((chunkKey, i) =>
      db.meta.get(chunkKey).then((part) => {
        const chunk = part?.value;
        const opening = chunk instanceof Uint8Array ? openChunk.open(fields, i, chunk) : undefined;
        // Wrapped: the transaction must not wait for WebCrypto, only for the reads.
        return [opening ?? Promise.resolve(undefined)] as const;
      }),
    ),
  ).then((all) => all.map(([opening]) => opening));
}

/** Deletes the record under `key`, its chunks and its position row. Joins the caller's transaction on `meta` when there is one. */
export async function deleteSnapshot(db: EngramDb, key: string): Promise<void> {
  await db.transaction('rw', db.meta, async () => {
    await db.meta.delete(key);
    await deleteChunks(db, key);
  });
}
