import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../lib/util/serial-queue.js';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe('SerialQueue', () => {
  it('runs tasks one at a time, in the order they were queued, however long each takes', async () => {
    const queue = new SerialQueue();
    const log: string[] = [];
    const task = (name: string, ticks: number) => async (): Promise<string> => {
      log.push(`start ${name}`);
      for (let i = 0; i < ticks; i++) await tick();
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([queue.run(task('a', 3)), queue.run(task('b', 0)), queue.run(task('c', 1))]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('a failed task rejects its own caller only; the next task still runs', async () => {
    const queue = new SerialQueue();
    const failed = queue.run(() => Promise.reject(new RangeError('boom')));
    const thrown = queue.run(() => {
      throw new TypeError('sync boom');
    });
    const next = queue.run(() => 42);
    await expect(failed).rejects.toThrow(RangeError);
    await expect(thrown).rejects.toThrow(TypeError);
    await expect(next).resolves.toBe(42);
  });

  it('idle() settles after every task queued before it, and never rejects', async () => {
    const queue = new SerialQueue();
    let done = 0;
    void queue.run(async () => {
      await tick();
      done++;
    });
    queue.run(() => Promise.reject(new Error('ignored'))).catch(() => undefined);
    void queue.run(async () => {
      await tick();
      done++;
    });
    await queue.idle();
    expect(done).toBe(2);
    // A task queued after idle() was asked for is not waited for by it.
    let later = false;
    const idle = queue.idle();
    void queue.run(async () => {
      await tick();
      await tick();
      later = true;
    });
    await idle;
    expect(later).toBe(false);
    await queue.idle();
    expect(later).toBe(true);
  });

  it('a task queued from inside a running task runs after it', async () => {
    const queue = new SerialQueue();
    const log: string[] = [];
    let inner: Promise<void> | undefined;
    await queue.run(() => {
      inner = queue.run(() => {
        log.push('inner');
      });
      log.push('outer');
    });
    await inner;
    expect(log).toEqual(['outer', 'inner']);
  });
});
