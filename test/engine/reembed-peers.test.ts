// Two instances on a store being re-embedded, in Node (fake-indexeddb); the same cases run in Chromium (reembed-peers.browser.test.ts).
import { reembedPeerTests } from './reembed-peers-cases.js';

reembedPeerTests('node');
