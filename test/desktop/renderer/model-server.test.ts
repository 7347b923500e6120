import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../lib/index.js';
import { checkModelServer, modelOptions } from '../../../desktop/renderer/model-server.js';
import { serverOrigin } from '../../../desktop/preload/server-origin.js';

describe('checkModelServer', () => {
  it('checkModelServer() takes a loopback or https server, trims it and drops trailing slashes', () => {
    expect(
      checkModelServer({ baseUrl: ' http://127.0.0.1:11434/v1/ ', model: ' llama3.2 ', stallSeconds: 30 }),
    ).toEqual({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2', stallSeconds: 30 });
    expect(checkModelServer({ baseUrl: 'http://localhost:1234/v1', model: 'qwen', stallSeconds: 1 }).baseUrl).toBe(
      'http://localhost:1234/v1',
    );
    expect(checkModelServer({ baseUrl: 'https://models.example.net/v1', model: 'm', stallSeconds: 600 }).baseUrl).toBe(
      'https://models.example.net/v1',
    );
  });

  it('checkModelServer() refuses what the request filter would refuse, and malformed settings', () => {
    const ok = { baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2', stallSeconds: 30 };
    for (const bad of [
      null,
      'http://127.0.0.1:11434/v1',
      { ...ok, baseUrl: 'http://192.168.1.20:11434/v1' },
      { ...ok, baseUrl: 'https://user:secret@models.example.net/v1' },
      { ...ok, baseUrl: 'file:///etc/passwd' },
      { ...ok, baseUrl: 'javascript:alert(1)' },
      { ...ok, baseUrl: '' },
      { ...ok, baseUrl: `https://example.net/${'a'.repeat(3000)}` },
      { ...ok, model: '' },
      { ...ok, model: 'a\u0000b' },
      { ...ok, model: 'm'.repeat(201) },
      { ...ok, model: 42 },
      { ...ok, stallSeconds: 0 },
      { ...ok, stallSeconds: 1.5 },
      { ...ok, stallSeconds: 601 },
      { ...ok, stallSeconds: '30' },
    ]) {
      expect(() => checkModelServer(bad), JSON.stringify(bad)).toThrow(ValidationError);
    }
  });

  it('modelOptions() gives openAiCompatible the stall bound in ms and the key only when there is one', () => {
    const server = { baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2', stallSeconds: 5 };
    expect(modelOptions(server, null)).toEqual({
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'llama3.2',
      idleTimeoutMs: 5000,
    });
    expect(modelOptions(server, 'sk-1').apiKey).toBe('sk-1');
  });
});

describe('serverOrigin', () => {
  it('serverOrigin() gives the origin of https anywhere and of http on this machine only', () => {
    expect(serverOrigin('http://127.0.0.1:11434/v1')).toBe('http://127.0.0.1:11434');
    expect(serverOrigin('http://localhost:8080/v1')).toBe('http://localhost:8080');
    expect(serverOrigin('http://[::1]:8080/v1')).toBe('http://[::1]:8080');
    expect(serverOrigin('https://qdrant.example.net:6333/x')).toBe('https://qdrant.example.net:6333');
    expect(serverOrigin('http://127.0.0.1.nip.io:11434/v1')).toBeUndefined();
    expect(serverOrigin('http://10.0.0.2/v1')).toBeUndefined();
    expect(serverOrigin('https://a:b@example.net')).toBeUndefined();
    expect(serverOrigin('not a url')).toBeUndefined();
  });
});
