// Encryption at rest over Chromium's IndexedDB (cases in at-rest-cases.ts).
import { atRestTests } from './at-rest-cases.js';

atRestTests('Chromium');
