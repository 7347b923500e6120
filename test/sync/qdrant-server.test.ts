import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenApiValidator } from './openapi-validator.js';
import { startQdrantServer, type QdrantServer } from './qdrant-server.js';

async function call(
  server: QdrantServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5_000),
  });
  return { status: response.status, json: await response.json() };
}

describe('qdrant test server', () => {
  let server: QdrantServer;
  beforeEach(async () => {
    server = await startQdrantServer();
    await call(server, 'PUT', '/collections/c', { vectors: { text: { size: 2, distance: 'Cosine' } } });
  });
  afterEach(async () => {
    await server.close();
  });

  it('answers valid requests with bodies that match the OpenAPI document', async () => {
    const up = await call(server, 'PUT', '/collections/c/points?wait=true', {
      points: [{ id: '00000000-0000-4000-8000-000000000001', vector: { text: [3, 4] }, payload: { a: 1 } }],
    });
    expect(up.status).toBe(200);
    const got = await call(server, 'POST', '/collections/c/points', {
      ids: ['00000000-0000-4000-8000-000000000001'],
      with_vector: true,
    });
    // Cosine collections store normalized vectors, as Qdrant does.
    expect(got.json).toMatchObject({
      status: 'ok',
      result: [{ payload: { a: 1 }, vector: { text: [0.6000000238418579, 0.800000011920929] } }],
    });
    const info = await call(server, 'GET', '/collections/c');
    expect(info.json).toMatchObject({
      result: { points_count: 1, config: { params: { vectors: { text: { size: 2 } } } } },
    });
    expect(server.violations).toEqual([]);
  });

  it('rejects a request the OpenAPI document does not allow, and records the violation', async () => {
    const bad = await call(server, 'PUT', '/collections/c/points', {
      points: [{ id: 'not-a-uuid', vector: { text: [1, 0] } }],
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ status: { error: expect.stringContaining('request body') as unknown } });
    const typo = await call(server, 'POST', '/collections/c/points/scroll', { limit: 2, orderBy: 'x' });
    expect(typo.status).toBe(400);
    const query = await call(server, 'PUT', '/collections/c/points?wait=maybe', { points: [] });
    expect(query.status).toBe(400);
    expect(server.violations).toHaveLength(3);
    expect(server.violations.join('\n')).toMatch(/format "uuid"/);
    expect(server.violations.join('\n')).toMatch(/unknown field orderBy/);
    expect(server.violations.join('\n')).toMatch(/query wait=maybe/);
    server.violations.length = 0;
  });

  it('refuses order_by on a field without a range index, as Qdrant does', async () => {
    const refused = await call(server, 'POST', '/collections/c/points/scroll', { order_by: { key: 'n' }, limit: 2 });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.json)).toMatch(/No range index/);
    await call(server, 'PUT', '/collections/c/index?wait=true', {
      field_name: 'n',
      field_schema: { type: 'integer', range: true },
    });
    expect(
      (await call(server, 'POST', '/collections/c/points/scroll', { order_by: { key: 'n' }, limit: 2 })).status,
    ).toBe(200);
    expect(server.violations).toEqual([]);
  });

  it('answers 404 for a missing collection and for endpoints it does not implement', async () => {
    expect((await call(server, 'GET', '/collections/nope')).status).toBe(404);
    expect(server.violations).toEqual([]);
    expect((await call(server, 'GET', '/cluster')).status).toBe(404);
    expect(server.violations).toEqual(['no such endpoint: get /cluster']);
    server.violations.length = 0;
  });

  it('checkResponse() catches a response body that breaks the document', () => {
    const validator = new OpenApiValidator();
    const path = '/collections/{collection_name}';
    expect(
      validator.checkResponse(path, 'get', 200, { result: { status: 'green' }, status: 'ok', time: 0 }),
    ).not.toEqual([]);
    expect(validator.checkResponse(path, 'get', 404, { status: { error: 'x' }, time: 0, result: null })).toEqual([]);
  });

  it('stop() refuses connections until restart(), on the same port', async () => {
    const url = server.url;
    await server.stop();
    await expect(fetch(`${url}/collections/c`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow(TypeError);
    await server.restart();
    expect(server.url).toBe(url);
    expect((await call(server, 'GET', '/collections/c')).status).toBe(200);
  });
});
