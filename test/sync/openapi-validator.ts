// Validates request and response bodies against Qdrant's own OpenAPI document with ajv.
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

const DOC_ID = 'qdrant-openapi.json';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * OpenAPI 3.0 writes "this may also be null" as `nullable: true`, which JSON Schema
 * (and ajv) only accepts next to `type`. Rewrites the other cases into JSON Schema.
 */
function toJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === 'example' || k === 'examples' ? null : toJsonSchema(v);
  delete out['example'];
  delete out['examples'];
  if (out['nullable'] === true && out['type'] === undefined) {
    delete out['nullable'];
    const rest = Object.keys(out).filter((k) => k !== 'description' && k !== 'default');
    if (rest.length === 0) return { type: 'null' };
    return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

/** Rewrites local refs so that a schema taken out of the document still resolves into it. */
function rebase(node: Json): Json {
  if (Array.isArray(node)) return node.map(rebase);
  if (node === null || typeof node !== 'object') return node;
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(node))
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : rebase(v);
  return out;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function unsigned(max: number): { type: 'number'; validate: (n: number) => boolean } {
  return { type: 'number', validate: (n) => Number.isInteger(n) && n >= 0 && n <= max };
}

/** One operation of the document: its request body, query parameters and 200 answer. */
interface Operation {
  request?: ValidateFunction;
  /** Top-level properties the request body may carry (union over anyOf branches). */
  requestKeys?: Set<string>;
  query: Map<string, ValidateFunction>;
  ok: ValidateFunction;
}

/** Checks bodies against Qdrant's OpenAPI document. */
export class OpenApiValidator {
  readonly #ajv: Ajv;
  readonly #doc: { paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> } };
  readonly #ops = new Map<string, Operation>();
  readonly #error: ValidateFunction;

  constructor(path = new URL('./qdrant-openapi.json', import.meta.url)) {
    this.#doc = toJsonSchema(JSON.parse(readFileSync(path, 'utf8')) as Json) as never;
    this.#ajv = new Ajv({
      strict: false,
      allErrors: true,
      validateFormats: true,
      formats: {
        uint: unsigned(Number.MAX_SAFE_INTEGER),
        uint64: unsigned(Number.MAX_SAFE_INTEGER),
        uint32: unsigned(2 ** 32 - 1),
        uint8: unsigned(255),
        int64: { type: 'number', validate: (n: number) => Number.isInteger(n) },
        float: { type: 'number', validate: (n: number) => Number.isFinite(n) },
        double: { type: 'number', validate: (n: number) => Number.isFinite(n) },
        uuid: UUID,
        uri: (s: string) => URL.canParse(s),
        'date-time': (s: string) => !Number.isNaN(Date.parse(s)),
        'partial-date-time': () => true,
      },
    });
    this.#ajv.addSchema({ $id: DOC_ID, components: this.#doc.components });
    this.#error = this.#ajv.compile({ $ref: `${DOC_ID}#/components/schemas/ErrorResponse` });
  }

  #operation(path: string, method: string): Operation {
    const key = `${method} ${path}`;
    const known = this.#ops.get(key);
    if (known !== undefined) return known;
    const op = this.#doc.paths[path]?.[method] as
      | {
          requestBody?: { content: { 'application/json': { schema: Json } } };
          parameters?: { name: string; in: string; schema: Json }[];
          responses: Record<string, { content: { 'application/json': { schema: Json } } }>;
        }
      | undefined;
    if (op === undefined) throw new TypeError(`the OpenAPI document has no ${key}`);
    const query = new Map<string, ValidateFunction>();
    for (const p of op.parameters ?? [])
      if (p.in === 'query') query.set(p.name, this.#ajv.compile(rebase(p.schema) as object));
    const requestSchema = op.requestBody?.content['application/json'].schema;
    const operation: Operation = {
      query,
      ok: this.#ajv.compile(rebase(op.responses['200']!.content['application/json'].schema) as object),
    };
    if (requestSchema !== undefined) {
      operation.request = this.#ajv.compile(rebase(requestSchema) as object);
      const keys = this.#topLevelKeys(requestSchema);
      if (keys !== undefined) operation.requestKeys = keys;
    }
    this.#ops.set(key, operation);
    return operation;
  }

  #topLevelKeys(schema: Json): Set<string> | undefined {
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return undefined;
    if (typeof schema['$ref'] === 'string')
      return this.#topLevelKeys(this.#doc.components.schemas[schema['$ref'].split('/').pop()!] ?? null);
    const branches = schema['anyOf'] ?? schema['oneOf'];
    if (Array.isArray(branches)) {
      const keys = new Set<string>();
      for (const b of branches) {
        const k = this.#topLevelKeys(b);
        if (k === undefined) return undefined;
        for (const x of k) keys.add(x);
      }
      return keys;
    }
    const props = schema['properties'];
    return props !== null && typeof props === 'object' && !Array.isArray(props)
      ? new Set(Object.keys(props))
      : undefined;
  }

  /** Problems with a request (empty when valid): body schema, unknown top-level fields, query parameters. */
  checkRequest(path: string, method: string, body: unknown, query: URLSearchParams): string[] {
    const op = this.#operation(path, method);
    const problems: string[] = [];
    for (const [name, raw] of query) {
      const check = op.query.get(name);
      if (check === undefined) {
        problems.push(`unknown query parameter ${name}`);
        continue;
      }
      const value: unknown = raw === 'true' ? true : raw === 'false' ? false : /^-?\d+$/.test(raw) ? Number(raw) : raw;
      if (!check(value)) problems.push(`query ${name}=${raw}: ${this.#ajv.errorsText(check.errors)}`);
    }
    if (op.request === undefined) {
      if (body !== undefined) problems.push(`${method} ${path} takes no body`);
      return problems;
    }
    if (!op.request(body)) problems.push(`request body: ${this.#ajv.errorsText(op.request.errors)}`);
    if (op.requestKeys !== undefined && body !== null && typeof body === 'object' && !Array.isArray(body)) {
      for (const k of Object.keys(body)) if (!op.requestKeys.has(k)) problems.push(`request body: unknown field ${k}`);
    }
    return problems;
  }

  /** Problems with a response body (empty when valid). */
  checkResponse(path: string, method: string, status: number, body: unknown): string[] {
    const check = status === 200 ? this.#operation(path, method).ok : this.#error;
    return check(body) ? [] : [`response ${status} to ${method} ${path}: ${this.#ajv.errorsText(check.errors)}`];
  }
}
