// The app's store gate (ui/store-gate.ts, the desktop's and the demo's): a conversion or an import (which close the
// app's engram) waits for the chat turns and agents' calls running, and those that come meanwhile wait
// for the reopen and then run; store works run one at a time in order (an import asked during a key
// change runs after it); a key change does not hold the users; a wait is told what it waits for and
// ends with its signal.
import { describe, expect, it } from 'vitest';
import { StoreGate } from '../../ui/store-gate.js';

/** A promise the test settles by hand. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** Lets every pending callback run. */
function settle(): Promise<void> {
  return new Promise((done) => setTimeout(done, 0));
}

const CONVERSION = { what: 'the store’s encryption', closes: true };
const IMPORT = { what: 'an import', closes: true };
const KEY_CHANGE = { what: 'a change of the store’s key', closes: false };

describe('StoreGate', () => {
  it('a conversion waits for the chat turn streaming, said; a turn sent meanwhile waits for the reopen, said, then runs', async () => {
    const gate = new StoreGate();
    const log: string[] = [];
    const streaming = deferred();
    const turn = gate.use('a chat turn', async () => {
      log.push('turn 1 streams');
      await streaming.promise;
      log.push('turn 1 stored');
    });
    const converting = deferred();
    const conversion = gate.run(
      CONVERSION,
      async () => {
        log.push('store closed');
        await converting.promise;
        log.push('store reopened');
      },
      { onWait: (what) => log.push(`conversion waits for ${what}`) },
    );
    await settle();
    expect(gate.closedFor).toBe('the store’s encryption');
    const second = gate.use(
      'a chat turn',
      () => {
        log.push('turn 2 runs');
        return Promise.resolve('stored');
      },
      { onWait: (what) => log.push(`turn 2 waits for ${what}`) },
    );
    await settle();
    expect(log).toEqual([
      'turn 1 streams',
      'conversion waits for a chat turn',
      'turn 2 waits for the store’s encryption',
    ]);
    streaming.resolve();
    await turn;
    await settle();
    expect(log.slice(3)).toEqual(['turn 1 stored', 'store closed']);
    converting.resolve();
    await conversion;
    expect(await second).toBe('stored');
    expect(log.slice(5)).toEqual(['store reopened', 'turn 2 runs']);
    expect([gate.closedFor, gate.holder]).toEqual([undefined, undefined]);
  });

  it('a user that waits for the reopen still runs when the conversion or its reopen failed (and meets what is there)', async () => {
    const gate = new StoreGate();
    const failing = deferred();
    const conversion = gate.run(CONVERSION, () => failing.promise);
    const user = gate.use('an agent’s call', () => Promise.resolve('answered'));
    failing.reject(new TypeError('the reopen failed'));
    await expect(conversion).rejects.toThrow('the reopen failed');
    expect(await user).toBe('answered');
  });

  it('told whether the store is open, the gate refuses a user that finds it closed after its wait (the reopen failed): a StoreError, the work never run', async () => {
    let open = true;
    const gate = new StoreGate(() => open);
    const failing = deferred();
    const conversion = gate.run(CONVERSION, async () => {
      open = false;
      await failing.promise;
    });
    let ran = false;
    const waits: string[] = [];
    const user = gate.use(
      'a chat turn',
      () => {
        ran = true;
        return Promise.resolve();
      },
      { onWait: (what) => waits.push(what) },
    );
    failing.reject(new TypeError('the reopen failed'));
    await expect(conversion).rejects.toThrow('the reopen failed');
    await expect(user).rejects.toMatchObject({
      code: 'STORE',
      message:
        'the store is closed (it did not open again after the store’s encryption): a chat turn was not run; open the store again, then retry',
    });
    expect([ran, waits]).toEqual([false, ['the store’s encryption']]);
    // Open again (the app reopened it): users run.
    open = true;
    expect(await gate.use('a chat turn', () => Promise.resolve('stored'))).toBe('stored');
  });

  it('a user stopped while it waits never runs: an AbortError, and the store work goes on', async () => {
    const gate = new StoreGate();
    const converting = deferred();
    const conversion = gate.run(CONVERSION, () => converting.promise);
    const stop = new AbortController();
    let ran = false;
    const user = gate.use(
      'a chat turn',
      () => {
        ran = true;
        return Promise.resolve();
      },
      { signal: stop.signal },
    );
    stop.abort();
    await expect(user).rejects.toMatchObject({ code: 'ABORTED' });
    converting.resolve();
    await conversion;
    expect(ran).toBe(false);
  });

  it('an import asked during a key change runs after it (told what it waits for); the users go on during the key change', async () => {
    const gate = new StoreGate();
    const log: string[] = [];
    const changing = deferred();
    const change = gate.run(KEY_CHANGE, async () => {
      log.push('key change starts');
      await changing.promise;
      log.push('key change done');
    });
    await settle();
    const imported = gate.run(
      IMPORT,
      () => {
        log.push('import runs');
        return Promise.resolve();
      },
      { onWait: (what) => log.push(`import waits for ${what}`) },
    );
    // A key change leaves the store open: a chat turn runs at once.
    await gate.use('a chat turn', () => {
      log.push('turn runs');
      return Promise.resolve();
    });
    await settle();
    expect(log).toEqual(['key change starts', 'import waits for a change of the store’s key', 'turn runs']);
    changing.resolve();
    await Promise.all([change, imported]);
    expect(log.slice(3)).toEqual(['key change done', 'import runs']);
  });

  it('a key change asked during an import waits for it, and a turn sent during the import waits for its reopen', async () => {
    const gate = new StoreGate();
    const log: string[] = [];
    const importing = deferred();
    const imported = gate.run(IMPORT, async () => {
      await importing.promise;
      log.push('import done');
    });
    await settle();
    const change = gate.run(
      KEY_CHANGE,
      () => {
        log.push('key change runs');
        return Promise.resolve();
      },
      { onWait: (what) => log.push(`key change waits for ${what}`) },
    );
    const turn = gate.use(
      'a chat turn',
      () => {
        log.push('turn runs');
        return Promise.resolve();
      },
      { onWait: (what) => log.push(`turn waits for ${what}`) },
    );
    await settle();
    expect(log).toEqual(['key change waits for an import', 'turn waits for an import']);
    importing.resolve();
    await Promise.all([imported, change, turn]);
    expect(log.slice(2).sort()).toEqual(['import done', 'key change runs', 'turn runs']);
    expect(log[2]).toBe('import done');
  });
});
