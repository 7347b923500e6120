// Two instances on a store being re-embedded, in Chromium: real IndexedDB transactions between two connections.
import { reembedPeerTests } from './reembed-peers-cases.js';

reembedPeerTests('chromium');
