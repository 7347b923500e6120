// A Qdrant-compatible HTTP server on loopback for tests and benchmarks: the
// endpoints engram uses, points kept in memory, every request and every
// response checked against Qdrant's OpenAPI document, and faults on demand.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { OpenApiValidator } from './openapi-validator.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Operations the server answers, as named in faults and request counts. */
export type QdrantOp =
  'exists' | 'create' | 'info' | 'drop' | 'index' | 'upsert' | 'scroll' | 'retrieve' | 'delete' | 'count';

/** A fault to inject into the next matching request. */
export type Fault =
  /** The connection is destroyed before any answer. */
  | { kind: 'hang-up' }
  /** An error status with a Qdrant error body. */
  | { kind: 'status'; status: number }
  /** 429 with a Retry-After header, in seconds. */
  | { kind: 'rate-limit'; retryAfterS: number }
  /** No answer until the client gives up (or the server closes). */
  | { kind: 'stall' }
  /** 200 with a body that is not JSON. */
  | { kind: 'malformed' }
  /** 200 whose JSON body is cut in half, then the connection closes. */
  | { kind: 'truncated' }
  /** An upsert or delete applies the first half of its points, then answers 500. */
  | { kind: 'half-batch' }
  /**
   * 200 with the right answer followed by `bytes` of JSON whitespace (a body that is
   * still valid, and as large as a server likes), streamed in 1 MiB chunks, with or
   * without a Content-Length that says so.
   */
  | { kind: 'oversized'; bytes: number; declared: boolean };

interface Armed {
  fault: Fault;
  op: QdrantOp | undefined;
  /** Only requests whose body this accepts take the fault. */
  when: ((body: Json | undefined) => boolean) | undefined;
  remaining: number;
}

interface Collection {
  dimensions: Map<string, number>;
  distance: Map<string, string>;
  points: Map<string, { id: string; vector: Record<string, number[]>; payload: JsonObject }>;
  indexes: Map<string, { type: string; range: boolean }>;
}

/** Routes: the document's path template, the operation, and a matcher. */
const ROUTES: { method: string; template: string; op: QdrantOp; re: RegExp }[] = [
  {
    method: 'get',
    template: '/collections/{collection_name}/exists',
    op: 'exists',
    re: /^\/collections\/([^/]+)\/exists$/,
  },
  { method: 'put', template: '/collections/{collection_name}', op: 'create', re: /^\/collections\/([^/]+)$/ },
  { method: 'get', template: '/collections/{collection_name}', op: 'info', re: /^\/collections\/([^/]+)$/ },
  { method: 'delete', template: '/collections/{collection_name}', op: 'drop', re: /^\/collections\/([^/]+)$/ },
  {
    method: 'put',
    template: '/collections/{collection_name}/index',
    op: 'index',
    re: /^\/collections\/([^/]+)\/index$/,
  },
  {
    method: 'put',
    template: '/collections/{collection_name}/points',
    op: 'upsert',
    re: /^\/collections\/([^/]+)\/points$/,
  },
  {
    method: 'post',
    template: '/collections/{collection_name}/points/scroll',
    op: 'scroll',
    re: /^\/collections\/([^/]+)\/points\/scroll$/,
  },
  {
    method: 'post',
    template: '/collections/{collection_name}/points',
    op: 'retrieve',
    re: /^\/collections\/([^/]+)\/points$/,
  },
  {
    method: 'post',
    template: '/collections/{collection_name}/points/delete',
    op: 'delete',
    re: /^\/collections\/([^/]+)\/points\/delete$/,
  },
  {
    method: 'post',
    template: '/collections/{collection_name}/points/count',
    op: 'count',
    re: /^\/collections\/([^/]+)\/points\/count$/,
  },
];

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_SCROLL = 10_000;

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A payload or body value as text: strings as they are, anything else as JSON. */
function text(v: Json | undefined): string {
  return typeof v === 'string' ? v : JSON.stringify(v ?? null);
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function valuesAt(payload: JsonObject, key: string): Json[] {
  let current: Json[] = [payload];
  for (const part of key.split('.')) {
    current = current.flatMap((v) => (isObject(v) && part in v ? [v[part]!] : []));
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

function asList(v: Json | undefined): Json[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

/** Evaluates a Qdrant filter against one point; conditions engram does not use are refused. */
function matches(filter: Json | undefined, point: { id: string; payload: JsonObject }): boolean {
  if (filter === undefined || filter === null) return true;
  if (!isObject(filter)) throw new HttpProblem(400, 'filter must be an object');
  const condition = (c: Json): boolean => {
    if (!isObject(c)) throw new HttpProblem(400, 'condition must be an object');
    if ('has_id' in c) return asList(c['has_id']).includes(point.id);
    if ('must' in c || 'should' in c || 'must_not' in c) return matches(c, point);
    if (typeof c['key'] === 'string') {
      const values = valuesAt(point.payload, c['key']);
      const m = c['match'];
      if (isObject(m)) {
        if ('value' in m) return values.includes(m['value']);
        if ('any' in m) return values.some((v) => asList(m['any']).includes(v));
        if ('except' in m) return values.every((v) => !asList(m['except']).includes(v));
        throw new HttpProblem(400, `the test server does not implement match ${JSON.stringify(m)}`);
      }
      const r = c['range'];
      if (isObject(r)) {
        return values.some(
          (v) =>
            typeof v === 'number' &&
            (typeof r['lt'] !== 'number' || v < r['lt']) &&
            (typeof r['lte'] !== 'number' || v <= r['lte']) &&
            (typeof r['gt'] !== 'number' || v > r['gt']) &&
            (typeof r['gte'] !== 'number' || v >= r['gte']),
        );
      }
    }
    if (isObject(c['is_empty'])) return valuesAt(point.payload, text(c['is_empty']['key'])).length === 0;
    throw new HttpProblem(400, `the test server does not implement condition ${JSON.stringify(c)}`);
  };
  const must = asList(filter['must']);
  const should = asList(filter['should']);
  const mustNot = asList(filter['must_not']);
  return must.every(condition) && (should.length === 0 || should.some(condition)) && !mustNot.some(condition);
}

function normalize(v: number[]): number[] {
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return norm === 0 ? v : v.map((x) => Math.fround(x / norm));
}

/** Orders UUIDs the way Qdrant does (as 128-bit numbers; lowercase hex sorts the same). */
function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

let shared: OpenApiValidator | undefined;

/** One validator per process: compiling the document's schemas is the slow part. */
function sharedValidator(): OpenApiValidator {
  shared ??= new OpenApiValidator();
  return shared;
}

/** Options of {@link startQdrantServer}. */
export interface QdrantServerOptions {
  /**
   * Check requests and responses against the OpenAPI document.
   * @default true
   */
  validate?: boolean;
}

/** A running test server. */
export interface QdrantServer {
  /** Base URL, e.g. http://127.0.0.1:PORT */
  readonly url: string;
  /** Requests that broke the OpenAPI document or responses this server sent that did; a test asserts it is empty. */
  readonly violations: string[];
  /** Requests served, per operation. */
  readonly requests: Map<QdrantOp, number>;
  /** Milliseconds spent handling requests (parsing, validating, answering), per operation. */
  readonly busyMs: Map<QdrantOp, number>;
  /** Arms a fault for the next `times` requests of `op` (any operation when omitted). */
  fail(fault: Fault, options?: { op?: QdrantOp; times?: number; when?: (body: Json | undefined) => boolean }): void;
  /** Removes every armed fault. */
  clearFaults(): void;
  /** The stored points of a collection (payloads as the server holds them). */
  points(collection: string): { id: string; vector: Record<string, number[]>; payload: JsonObject }[];
  /**
   * Writes a point straight into a collection's store, bypassing every check: what a
   * malicious (or broken) server can do to what it holds.
   */
  replace(collection: string, point: { id: string; vector?: Record<string, number[]>; payload: JsonObject }): void;
  /** Stops listening: connections are refused until {@link restart}. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a Qdrant-compatible server on 127.0.0.1 with a random port.
 * @example
 * const server = await startQdrantServer()
 * server.fail({ kind: 'status', status: 503 }, { op: 'upsert' })
 */
export async function startQdrantServer(options: QdrantServerOptions = {}): Promise<QdrantServer> {
  const validator = options.validate === false ? undefined : sharedValidator();
  const collections = new Map<string, Collection>();
  const armed: Armed[] = [];
  const violations: string[] = [];
  const requests = new Map<QdrantOp, number>();
  const busyMs = new Map<QdrantOp, number>();
  const sockets = new Set<Socket>();
  let operationId = 0;

  const send = (
    res: ServerResponse,
    route: (typeof ROUTES)[number] | undefined,
    status: number,
    body: Json,
    headers: Record<string, string> = {},
  ): void => {
    const envelope: Json =
      status === 200
        ? { result: body, status: 'ok', time: 0.0001 }
        : { status: { error: text(body) }, time: 0.0001, result: null };
    if (validator !== undefined && route !== undefined)
      violations.push(...validator.checkResponse(route.template, route.method, status, envelope));
    const json = JSON.stringify(envelope);
    res
      .writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), ...headers })
      .end(json);
  };

  const collectionOf = (name: string): Collection => {
    const c = collections.get(name);
    if (c === undefined) throw new HttpProblem(404, `Not found: Collection \`${name}\` doesn't exist!`);
    return c;
  };

  const recordOf = (
    p: { id: string; vector: Record<string, number[]>; payload: JsonObject },
    withVector: Json | undefined,
  ): JsonObject => {
    const out: JsonObject = { id: p.id, payload: p.payload };
    if (withVector === true) out['vector'] = p.vector;
    else if (Array.isArray(withVector))
      out['vector'] = Object.fromEntries(Object.entries(p.vector).filter(([k]) => withVector.includes(k)));
    return out;
  };

  const handle = (
    route: (typeof ROUTES)[number],
    name: string,
    body: Json | undefined,
    fault: Fault | undefined,
  ): Json => {
    switch (route.op) {
      case 'exists':
        return { exists: collections.has(name) };
      case 'create': {
        if (collections.has(name)) throw new HttpProblem(409, `Wrong input: Collection \`${name}\` already exists!`);
        const vectors = (body as JsonObject)['vectors'];
        const c: Collection = { dimensions: new Map(), distance: new Map(), points: new Map(), indexes: new Map() };
        if (!isObject(vectors)) throw new HttpProblem(400, 'the test server only implements collections with vectors');
        const named = 'size' in vectors ? { '': vectors } : vectors;
        for (const [k, v] of Object.entries(named)) {
          c.dimensions.set(k, Number((v as JsonObject)['size']));
          c.distance.set(k, text((v as JsonObject)['distance']));
        }
        collections.set(name, c);
        return true;
      }
      case 'drop':
        return collections.delete(name);
      case 'info': {
        const c = collectionOf(name);
        const vectors: JsonObject = {};
        for (const [k, size] of c.dimensions) vectors[k] = { size, distance: c.distance.get(k)! };
        const payloadSchema: JsonObject = {};
        for (const [k, idx] of c.indexes) {
          payloadSchema[k] = {
            data_type: idx.type,
            points: [...c.points.values()].filter((p) => valuesAt(p.payload, k).length > 0).length,
          };
        }
        return {
          status: 'green',
          optimizer_status: 'ok',
          points_count: c.points.size,
          indexed_vectors_count: 0,
          segments_count: 1,
          config: {
            params: {
              vectors: c.dimensions.has('') ? (vectors[''] ?? null) : vectors,
              shard_number: 1,
              replication_factor: 1,
              write_consistency_factor: 1,
              on_disk_payload: true,
            },
            hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000 },
            optimizer_config: { default_segment_number: 0, flush_interval_sec: 5 },
            wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 },
          },
          payload_schema: payloadSchema,
        };
      }
      case 'index': {
        const c = collectionOf(name);
        const b = body as JsonObject;
        const schema = b['field_schema'];
        const type = typeof schema === 'string' ? schema : isObject(schema) ? text(schema['type']) : 'keyword';
        const range =
          type === 'integer' ? !isObject(schema) || schema['range'] !== false : type === 'float' || type === 'datetime';
        c.indexes.set(text(b['field_name']), { type, range });
        return { operation_id: ++operationId, status: 'completed' };
      }
      case 'upsert': {
        const c = collectionOf(name);
        const b = body as JsonObject;
        if (!Array.isArray(b['points']))
          throw new HttpProblem(400, 'the test server only implements the points list form of upsert');
        const mode = b['update_mode'] ?? 'upsert';
        const incoming = b['points'].map((raw) => {
          const p = raw as JsonObject;
          const vector: Record<string, number[]> = {};
          const v = p['vector'];
          if (Array.isArray(v)) vector[''] = v as number[];
          else if (isObject(v)) for (const [k, x] of Object.entries(v)) vector[k] = x as number[];
          for (const [k, x] of Object.entries(vector)) {
            const dim = c.dimensions.get(k);
            if (dim === undefined) throw new HttpProblem(400, `Wrong input: Not existing vector name error: ${k}`);
            if (x.length !== dim)
              throw new HttpProblem(400, `Wrong input: Vector dimension error: expected dim: ${dim}, got ${x.length}`);
            vector[k] = c.distance.get(k) === 'Cosine' ? normalize(x) : x;
          }
          return { id: text(p['id']).toLowerCase(), vector, payload: isObject(p['payload']) ? p['payload'] : {} };
        });
        const upTo = fault?.kind === 'half-batch' ? Math.floor(incoming.length / 2) : incoming.length;
        for (const p of incoming.slice(0, upTo)) {
          const stored = c.points.get(p.id);
          if (stored !== undefined) {
            if (mode === 'insert_only') continue;
            if (b['update_filter'] !== undefined && !matches(b['update_filter'], stored)) continue;
          } else if (mode === 'update_only') continue;
          c.points.set(p.id, p);
        }
        if (fault?.kind === 'half-batch')
          throw new HttpProblem(500, 'Service internal error: the batch failed halfway');
        return { operation_id: ++operationId, status: 'completed' };
      }
      case 'scroll': {
        const c = collectionOf(name);
        const b = (body ?? {}) as JsonObject;
        const limit = typeof b['limit'] === 'number' ? b['limit'] : 10;
        if (limit > MAX_SCROLL) throw new HttpProblem(400, `the test server caps scroll pages at ${MAX_SCROLL}`);
        const selected = [...c.points.values()].filter((p) => matches(b['filter'], p));
        const orderBy =
          typeof b['order_by'] === 'string' ? { key: b['order_by'] } : (b['order_by'] as JsonObject | undefined | null);
        const withVector = b['with_vector'] ?? false;
        if (orderBy !== undefined && orderBy !== null) {
          const key = text(orderBy['key']);
          if (c.indexes.get(key)?.range !== true)
            throw new HttpProblem(
              400,
              `Bad request: No range index for \`order_by\` key: \`${key}\`. Please create one to use \`order_by\`.`,
            );
          if (b['offset'] !== undefined && b['offset'] !== null)
            throw new HttpProblem(400, 'Bad request: Cannot use an `offset` when using `order_by`');
          const desc = orderBy['direction'] === 'desc';
          const rows = selected
            .flatMap((p) =>
              valuesAt(p.payload, key)
                .filter((v): v is number => typeof v === 'number')
                .map((v) => ({ p, v })),
            )
            .sort((x, y) => (desc ? y.v - x.v : x.v - y.v) || byId(x.p, y.p));
          const page = rows.slice(0, limit).map(({ p, v }) => ({ ...recordOf(p, withVector), order_value: v }));
          return { points: page, next_page_offset: null };
        }
        selected.sort(byId);
        const offset = typeof b['offset'] === 'string' ? b['offset'].toLowerCase() : undefined;
        const from = offset === undefined ? selected : selected.filter((p) => p.id >= offset);
        return {
          points: from.slice(0, limit).map((p) => recordOf(p, withVector)),
          next_page_offset: from[limit]?.id ?? null,
        };
      }
      case 'retrieve': {
        const c = collectionOf(name);
        const b = body as JsonObject;
        const withVector = b['with_vector'] ?? false;
        return asList(b['ids']).flatMap((id) => {
          const p = c.points.get(text(id).toLowerCase());
          return p === undefined ? [] : [recordOf(p, withVector)];
        });
      }
      case 'delete': {
        const c = collectionOf(name);
        const b = body as JsonObject;
        const ids = Array.isArray(b['points'])
          ? b['points'].map((id) => text(id).toLowerCase())
          : [...c.points.values()].filter((p) => matches(b['filter'], p)).map((p) => p.id);
        const upTo = fault?.kind === 'half-batch' ? Math.floor(ids.length / 2) : ids.length;
        for (const id of ids.slice(0, upTo)) c.points.delete(id);
        if (fault?.kind === 'half-batch')
          throw new HttpProblem(500, 'Service internal error: the batch failed halfway');
        return { operation_id: ++operationId, status: 'completed' };
      }
      case 'count': {
        const c = collectionOf(name);
        const b = (body ?? {}) as JsonObject;
        return { count: [...c.points.values()].filter((p) => matches(b['filter'], p)).length };
      }
    }
  };

  const takeFault = (op: QdrantOp, body: Json | undefined): Fault | undefined => {
    const i = armed.findIndex((a) => (a.op === undefined || a.op === op) && (a.when === undefined || a.when(body)));
    if (i < 0) return undefined;
    const a = armed[i]!;
    a.remaining -= 1;
    if (a.remaining <= 0) armed.splice(i, 1);
    return a.fault;
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.socket.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      const started = performance.now();
      let op: QdrantOp | undefined;
      try {
        op = serve();
      } finally {
        if (op !== undefined) busyMs.set(op, (busyMs.get(op) ?? 0) + performance.now() - started);
      }
    });
    const serve = (): QdrantOp | undefined => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const method = (req.method ?? 'GET').toLowerCase();
      let name = '';
      const route = ROUTES.find((r) => {
        const m = r.method === method ? r.re.exec(url.pathname) : null;
        if (m !== null) name = decodeURIComponent(m[1]!);
        return m !== null;
      });
      if (route === undefined) {
        violations.push(`no such endpoint: ${method} ${url.pathname}`);
        send(res, undefined, 404, `the test server does not implement ${method.toUpperCase()} ${url.pathname}`);
        return undefined;
      }
      requests.set(route.op, (requests.get(route.op) ?? 0) + 1);
      const text = Buffer.concat(chunks).toString('utf8');
      let body: Json | undefined;
      try {
        body = text === '' ? undefined : (JSON.parse(text) as Json);
      } catch {
        violations.push(`request body is not JSON: ${text.slice(0, 80)}`);
        send(res, route, 400, 'Format error in JSON body');
        return route.op;
      }
      const problems = validator?.checkRequest(route.template, route.method, body, url.searchParams) ?? [];
      if (problems.length > 0) {
        violations.push(...problems.map((p) => `${method.toUpperCase()} ${url.pathname}: ${p}`));
        send(res, route, 400, `Format error in JSON body: ${problems.join('; ')}`);
        return route.op;
      }
      const fault = takeFault(route.op, body);
      switch (fault?.kind) {
        case 'hang-up':
          req.socket.destroy();
          return route.op;
        case 'stall':
          return route.op; // the socket is destroyed by the client's timeout or by close()
        case 'status':
          send(res, route, fault.status, `Service internal error: injected ${fault.status}`);
          return route.op;
        case 'rate-limit':
          send(res, route, 429, 'Too many requests: injected rate limit', { 'retry-after': String(fault.retryAfterS) });
          return route.op;
        case 'malformed':
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"result": {"points": [ <html>oops');
          return route.op;
        default:
          break;
      }
      let result: Json;
      try {
        result = handle(route, name, body, fault);
      } catch (e) {
        if (e instanceof HttpProblem) {
          send(res, route, e.status, e.message);
          return route.op;
        }
        throw e;
      }
      if (fault?.kind === 'oversized') {
        const full = JSON.stringify({ result, status: 'ok', time: 0.0001 });
        const total = Buffer.byteLength(full) + fault.bytes;
        res.writeHead(200, {
          'content-type': 'application/json',
          ...(fault.declared ? { 'content-length': String(total) } : {}),
        });
        res.write(full);
        const chunk = ' '.repeat(1024 * 1024);
        let left = fault.bytes;
        const more = (): void => {
          while (left > 0) {
            const piece = left >= chunk.length ? chunk : chunk.slice(0, left);
            left -= piece.length;
            if (!res.write(piece)) {
              res.once('drain', more);
              return;
            }
          }
          res.end();
        };
        res.on('error', () => undefined);
        more();
        return route.op;
      }
      if (fault?.kind === 'truncated') {
        const full = JSON.stringify({ result, status: 'ok', time: 0.0001 });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(full) });
        res.write(full.slice(0, Math.floor(full.length / 2)), () => req.socket.destroy());
        return route.op;
      }
      send(res, route, 200, result);
      return route.op;
    };
  };

  let server: Server | undefined;
  let port = 0;
  const listen = async (): Promise<void> => {
    const http = createServer({ keepAliveTimeout: 1000 }, onRequest);
    server = http;
    http.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
    port = (http.address() as AddressInfo).port;
  };
  const stop = async (): Promise<void> => {
    const http = server;
    if (http === undefined || !http.listening) return;
    const closed = new Promise<void>((resolve) => {
      http.close(() => {
        resolve();
      });
    });
    for (const s of sockets) s.destroy();
    sockets.clear();
    await closed;
  };
  await listen();

  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    violations,
    requests,
    busyMs,
    fail(fault, opts = {}) {
      armed.push({ fault, op: opts.op, remaining: opts.times ?? 1, when: opts.when });
    },
    clearFaults() {
      armed.length = 0;
    },
    points(collection) {
      return [...(collections.get(collection)?.points.values() ?? [])].map((p) => structuredClone(p));
    },
    replace(collection, point) {
      const c = collections.get(collection);
      if (c === undefined) throw new Error(`no collection ${collection}`);
      c.points.set(point.id, { id: point.id, vector: point.vector ?? {}, payload: structuredClone(point.payload) });
    },
    stop,
    restart: listen,
    close: async () => {
      armed.length = 0;
      await stop();
    },
  };
}
