// The re-embed's switch and rewrite in Chromium (real IndexedDB); the same cases run in Node (reembed-switch.test.ts).
import { reembedSwitchTests } from './reembed-switch-cases.js';

reembedSwitchTests('chromium');
