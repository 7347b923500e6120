import { expect, it } from 'vitest';
it('runs in a real browser with IndexedDB', () => {
  expect(typeof indexedDB.open).toBe('function');
  expect(navigator.userAgent).toMatch(/Chrome/);
});
