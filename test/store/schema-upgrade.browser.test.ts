// The schema v5 upgrade over Chromium's IndexedDB (cases in schema-upgrade-cases.ts).
import { schemaUpgradeTests } from './schema-upgrade-cases.js';

schemaUpgradeTests('Chromium');
