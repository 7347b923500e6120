/**
 * The worker of bulk-decrypt.ts: opens AES-GCM sealed bytes with WebCrypto on its own thread
 * (Chromium runs WebCrypto's AES-GCM on the thread that calls it). Answers each request with
 * its id and the plain bytes (transferred), or with none when they do not open.
 */
import { openSealed, type BulkDecryptAnswer, type BulkDecryptRequest } from './bulk-decrypt.js';

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<BulkDecryptRequest>) => void) | null;
  postMessage(message: BulkDecryptAnswer, transfer?: Transferable[]): void;
};

scope.onmessage = (event) => {
  const { id, ...request } = event.data;
  void openSealed(request).then((plain) => {
    scope.postMessage({ id, plain }, plain === undefined ? [] : [plain]);
  });
};
