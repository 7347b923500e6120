import { describe, expect, it } from 'vitest';
import { idFromUuid, idToUuid, newId } from '../../lib/util/id.js';

describe('id', () => {
  it('newId() is time-sortable and strictly increasing within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => newId(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
    expect(newId(1_700_000_000_001) > ids[999]!).toBe(true);
    expect(ids.every((id) => /^[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
  });

  it('idToUuid() / idFromUuid() round trip', () => {
    const id = newId();
    const uuid = idToUuid(id);
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(idFromUuid(uuid)).toBe(id);
  });
});
