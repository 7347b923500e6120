/**
 * A libsodium build whose module lacks a function the cipher calls on its memory (another build
 * than the one pinned): the encrypted open gets a StoreError naming what is missing, never a
 * TypeError from deep inside a write.
 */
import { describe, expect, it, vi } from 'vitest';
import { StoreError } from '../../lib/errors.js';

vi.mock('libsodium-wrappers', () => ({
  default: { ready: Promise.resolve(), libsodium: { _malloc: (): number => 0, _free: (): void => {} } },
}));

describe('RowCipher over a libsodium module without its functions', () => {
  it('refuses with a StoreError naming the missing functions', async () => {
    const { RowCipher } = await import('../../lib/store/row-cipher.js');
    const refused = await RowCipher.create(crypto.getRandomValues(new Uint8Array(64))).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).message).toMatch(
      /^the at-rest cipher \(libsodium\) did not load: its module lacks _crypto_aead_xchacha20poly1305_ietf_encrypt, .*_crypto_kdf_hkdf_sha256_extract_final$/,
    );
  });
});
