// Encryption at rest over fake-indexeddb (cases in at-rest-cases.ts).
import { atRestTests } from './at-rest-cases.js';

atRestTests('Node');
