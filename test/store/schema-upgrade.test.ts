// The schema v5 upgrade over fake-indexeddb (cases in schema-upgrade-cases.ts).
import { schemaUpgradeTests } from './schema-upgrade-cases.js';

schemaUpgradeTests('Node');
