// engram.reembed() on an open store in Node (fake-indexeddb); the same cases run in Chromium (reembed.browser.test.ts).
import { reembedTests } from './reembed-cases.js';

reembedTests('node');
