import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isUuid } from '../../domain/shared/uuid';

describe('isUuid (the written form of every id)', () => {
  it('accepts UUIDs of any version, in either case', () => {
    const id = randomUUID();
    expect(isUuid(id)).toBe(true);
    expect(isUuid(id.toUpperCase())).toBe(true);
    expect(isUuid('0190f5c4-7a3e-7cc0-8a1b-2b3c4d5e6f70')).toBe(true);
  });

  it('refuses anything else: wrong groups, non-hex digits, braces, surrounding text', () => {
    for (const text of [
      '',
      'not-a-uuid',
      '0190f5c47a3e7cc08a1b2b3c4d5e6f70',
      '0190f5c4-7a3e-7cc0-8a1b-2b3c4d5e6f7',
      '0190f5c4-7a3e-7cc0-8a1b-2b3c4d5e6f7g',
      '{0190f5c4-7a3e-7cc0-8a1b-2b3c4d5e6f70}',
      ' 0190f5c4-7a3e-7cc0-8a1b-2b3c4d5e6f70',
      '0190f5c4-7a3e-7cc0-8a1b-2b3c4d5e6f70\n',
    ]) {
      expect(isUuid(text), JSON.stringify(text)).toBe(false);
    }
  });
});
