// engram.reembed() on an open store in Chromium: real IndexedDB transactions, the sealed store's real WebCrypto.
import { reembedTests } from './reembed-cases.js';

reembedTests('chromium');
