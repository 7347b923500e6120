import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import {
  checkOptions,
  definedOnly,
  id,
  int,
  listOf,
  oneOf,
  optional,
  time,
  withDefault,
  type OptionsSpec,
} from '../../lib/util/options.js';

interface PageOptions {
  kinds?: ('a' | 'b')[];
  limit?: number;
  owner?: string;
  since?: Date | string | number;
}

const SPEC = {
  kinds: withDefault(listOf(oneOf(['a', 'b'] as const)), ['a']),
  limit: withDefault(int(1, 10), 5),
  owner: optional(id),
  since: optional(time),
} satisfies OptionsSpec<PageOptions>;

function fieldOf(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    if (e instanceof ValidationError) return e.field;
    throw e;
  }
  throw new Error('no ValidationError');
}

describe('checkOptions', () => {
  it('checkOptions() gives each field its checked value or its default', () => {
    expect(checkOptions('options', {}, SPEC)).toEqual({ kinds: ['a'], limit: 5, owner: undefined, since: undefined });
    expect(checkOptions('options', { kinds: ['b', 'a'], limit: 2, since: '1970-01-01T00:00:01Z' }, SPEC)).toEqual({
      kinds: ['b', 'a'],
      limit: 2,
      owner: undefined,
      since: 1000,
    });
  });

  it('checkOptions() refuses a value that is not a plain object with the hint, and an unknown key by name', () => {
    expect(() => checkOptions('options', [], SPEC, 'must be an object with a limit')).toThrow(
      'options: must be an object with a limit',
    );
    expect(() => checkOptions('options', { limit: 1, colour: 'red' }, SPEC)).toThrow(
      'options.colour: is not a known option (known: kinds, limit, owner, since)',
    );
  });

  it('checkOptions() checks the fields in the spec order and names the first bad one', () => {
    expect(fieldOf(() => checkOptions('options', { owner: '', limit: 0 }, SPEC))).toBe('options.limit');
    expect(fieldOf(() => checkOptions('options', { owner: '' }, SPEC))).toBe('options.owner');
    expect(fieldOf(() => checkOptions('change', { since: 'never' }, SPEC, undefined, ''))).toBe('since');
  });

  it('listOf() names a bad item by its index and refuses a value that is not an array', () => {
    expect(fieldOf(() => checkOptions('options', { kinds: ['a', 'c'] }, SPEC))).toBe('options.kinds[1]');
    expect(() => checkOptions('options', { kinds: 'a' }, SPEC)).toThrow('options.kinds: must be an array');
  });

  it('definedOnly() leaves out the fields that hold no value', () => {
    expect(definedOnly(checkOptions('options', { owner: 'ana' }, SPEC))).toEqual({
      kinds: ['a'],
      limit: 5,
      owner: 'ana',
    });
  });
});
