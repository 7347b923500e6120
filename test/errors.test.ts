import { describe, expect, it } from 'vitest';
import { ClosedError, EngramError, ValidationError, isEngramError } from '../lib/errors.js';

describe('errors', () => {
  it('isEngramError() recognises subclasses and plain copies that crossed a boundary', () => {
    const e = new ValidationError('content', 'must not be empty');
    expect(e).toBeInstanceOf(EngramError);
    expect(e.code).toBe('VALIDATION');
    expect(e.field).toBe('content');
    expect(isEngramError(e)).toBe(true);
    expect(isEngramError({ name: 'ClosedError', code: 'CLOSED', message: 'x' })).toBe(true);
    expect(isEngramError(new Error('x'))).toBe(false);
    expect(isEngramError(null)).toBe(false);
    expect(new ClosedError().message).toBe('engram is closed');
  });
});
