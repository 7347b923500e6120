// Node tests run over fake-indexeddb: a complete in-memory IndexedDB.
import 'fake-indexeddb/auto';
