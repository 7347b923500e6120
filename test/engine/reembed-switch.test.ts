// The re-embed's switch and rewrite in Node (fake-indexeddb); the same cases run in Chromium (reembed-switch.browser.test.ts).
import { reembedSwitchTests } from './reembed-switch-cases.js';

reembedSwitchTests('node');
