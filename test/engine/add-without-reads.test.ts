// add()'s duplicate check without reads (see add-without-reads-cases.ts), over fake-indexeddb.
import { describe, it } from 'vitest';
import { anotherInstanceMovesTheLog, ownWritesNeedNoReads } from './add-without-reads-cases.js';

describe("add()'s duplicate check without reads", () => {
  it(
    'new statements in a row: no change-log read; duplicates of own writes, deleted ones and other scopes are still told apart',
    ownWritesNeedNoReads,
  );
  it(
    'another instance logs in between: the write rolls back and is checked again against the log, and finds its memory',
    anotherInstanceMovesTheLog,
  );
});
