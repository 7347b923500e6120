/**
 * A page where libsodium cannot load (a Content-Security-Policy without 'wasm-unsafe-eval', a
 * bundler that left it out): the first encrypted open gets a StoreError that says so, not a
 * bare module error, and a later open tries again.
 */
import { describe, expect, it, vi } from 'vitest';
import { StoreError } from '../../lib/errors.js';

const state = vi.hoisted(() => ({ fail: true }));
vi.mock('libsodium-wrappers', async (original) => {
  if (state.fail) throw new Error('WebAssembly.instantiate(): Refused to compile or instantiate WebAssembly module');
  return original();
});

describe('RowCipher when libsodium does not load', () => {
  it('refuses with a StoreError naming the cipher, and loads it on the next try', async () => {
    const { RowCipher } = await import('../../lib/store/row-cipher.js');
    const keys = crypto.getRandomValues(new Uint8Array(64));
    const refused = await RowCipher.create(keys).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).message).toMatch(/^the at-rest cipher \(libsodium\) did not load: /);
    state.fail = false;
    const cipher = await RowCipher.create(keys);
    const aad = new TextEncoder().encode('aad');
    expect(cipher.open(cipher.seal(new TextEncoder().encode('Ana'), aad), aad)).toEqual(
      new TextEncoder().encode('Ana'),
    );
  });
});
