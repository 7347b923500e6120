/**
 * AES-GCM opening of large sealed bytes (an index snapshot's 4 MB pieces, up to hundreds of MB
 * in all) on a worker's thread where there is one. Chromium runs WebCrypto's AES-GCM on the
 * thread that calls it, promise or not, so on the page's thread an encrypted store's open spent
 * its decryption there, beside the reads and the index's restore it could overlap with
 * (bench/results/REPORT.md, "Measurements cited by the code").
 *
 * One worker for the page, started on first use and stopped once idle. Where no worker can be
 * had (Node; a worker that fails to start or dies), the bytes are opened on the calling thread:
 * the same result, only slower. The sealed bytes are handed over (their buffer transferred, not
 * copied) when they fill it: the caller must not use them afterwards.
 */

/** A request to the worker: `sealed` is the IV (its first `ivBytes`), then the ciphertext and tag. */
export interface BulkDecryptRequest {
  id: number;
  key: CryptoKey;
  ivBytes: number;
  aad: Uint8Array<ArrayBuffer>;
  sealed: Uint8Array<ArrayBuffer>;
}

/** The worker's answer: the plain bytes, or none when they do not open. */
export interface BulkDecryptAnswer {
  id: number;
  plain: ArrayBuffer | undefined;
}

/** A worker left without requests this long is stopped. */
const IDLE_MS = 5_000;
/**
 * Sealed bytes up to this size open on the calling thread: there AES-GCM takes well under a
 * millisecond for them, less than a round trip to the worker (and far less than starting one),
 * which made a small store's encrypted open slower than it needed to be (bench/results/REPORT.md, "at-rest").
 */
const ON_THREAD_BYTES = 256 * 1024;

/**
 * The plain bytes of `sealed` (an IV of `ivBytes`, then what AES-GCM sealed under `key` and
 * `aad`); undefined when they do not open (changed, moved, another key).
 * @example
 * const plain = await decryptBulk({ key, ivBytes: 12, aad, sealed: piece }); // Uint8Array, or undefined
 */
export async function decryptBulk(request: Omit<BulkDecryptRequest, 'id'>): Promise<Uint8Array | undefined> {
  const worker = request.sealed.byteLength <= ON_THREAD_BYTES ? undefined : DecryptWorker.get();
  if (worker !== undefined) {
    const answer = await worker.decrypt(request);
    if (answer !== FAILED) return answer;
  }
  const plain = await openSealed(request);
  return plain === undefined ? undefined : new Uint8Array(plain);
}

/**
 * What `sealed` opens to, on the calling thread (the worker's too); undefined when it does not open.
 * @example
 * const plain = await openSealed({ key, ivBytes: 12, aad, sealed }); // ArrayBuffer, or undefined
 */
export async function openSealed({
  key,
  ivBytes,
  aad,
  sealed,
}: Omit<BulkDecryptRequest, 'id'>): Promise<ArrayBuffer | undefined> {
  try {
    return await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: sealed.subarray(0, ivBytes), additionalData: aad },
      key,
      sealed.subarray(ivBytes),
    );
  } catch {
    return undefined;
  }
}

/** The worker could not answer (it failed or died): open the bytes on this thread. */
const FAILED = Symbol('failed');

/** The page's decrypting worker: requests matched to answers by id, stopped when idle. */
class DecryptWorker {
  static #current: DecryptWorker | undefined;
  /** No worker can be had here (none in this runtime, or one failed): never tried again. */
  static #unavailable = typeof Worker === 'undefined';

  readonly #worker: Worker;
  readonly #pending = new Map<number, (answer: Uint8Array | undefined | typeof FAILED) => void>();
  #nextId = 1;
  #idle: ReturnType<typeof setTimeout> | undefined;

  /** The running worker, started if none runs; undefined where none can be had. */
  static get(): DecryptWorker | undefined {
    if (DecryptWorker.#unavailable) return undefined;
    try {
      DecryptWorker.#current ??= new DecryptWorker(
        new Worker(new URL('./bulk-decrypt-worker.ts', import.meta.url), { type: 'module', name: 'engram-decrypt' }),
      );
    } catch {
      DecryptWorker.#unavailable = true;
    }
    return DecryptWorker.#current;
  }

  constructor(worker: Worker) {
    this.#worker = worker;
    worker.addEventListener('message', (event: MessageEvent<BulkDecryptAnswer>) => {
      const { id, plain } = event.data;
      this.#answer(id, plain === undefined ? undefined : new Uint8Array(plain));
    });
    const fail = (event: Event): void => {
      event.preventDefault();
      DecryptWorker.#unavailable = true;
      this.#stop();
    };
    worker.addEventListener('error', fail);
    worker.addEventListener('messageerror', fail);
  }

  /** The plain bytes from the worker, undefined when they do not open, FAILED when the worker could not answer. */
  decrypt(request: Omit<BulkDecryptRequest, 'id'>): Promise<Uint8Array | undefined | typeof FAILED> {
    clearTimeout(this.#idle);
    const id = this.#nextId++;
    const { sealed } = request;
    // Bytes that fill their buffer are handed over; a view into a larger one is copied (the rest is not ours).
    const whole = sealed.byteOffset === 0 && sealed.byteLength === sealed.buffer.byteLength;
    const sent = whole ? sealed : sealed.slice();
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      try {
        this.#worker.postMessage({ ...request, id, sealed: sent } satisfies BulkDecryptRequest, [sent.buffer]);
      } catch {
        this.#answer(id, FAILED);
      }
    });
  }

  #answer(id: number, answer: Uint8Array | undefined | typeof FAILED): void {
    const resolve = this.#pending.get(id);
    if (resolve === undefined) return;
    this.#pending.delete(id);
    resolve(answer);
    if (this.#pending.size === 0)
      this.#idle = setTimeout(() => {
        this.#stop();
      }, IDLE_MS);
  }

  /** Stops the worker; requests still waiting are answered FAILED (opened on the calling thread). */
  #stop(): void {
    clearTimeout(this.#idle);
    if (DecryptWorker.#current === this) DecryptWorker.#current = undefined;
    this.#worker.terminate();
    for (const resolve of this.#pending.values()) resolve(FAILED);
    this.#pending.clear();
  }
}
