import { DomainError } from '../../domain/shared/errors';

/**
 * Where a parsed JSON value holds a key the JSON body parser refuses (secure-json-parse, fastify's default): an own
 * `__proto__` key anywhere, or a `constructor` key whose value is an object with a `prototype` key. Returns the
 * first such key's dotted path (array items by index) and name, `undefined` when there is none. `value` must come
 * from `JSON.parse`, which makes `__proto__` an own property.
 */
export const poisonedKeyOf = (value: unknown, path = ''): { field: string; key: string } | undefined => {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value)) {
    const field = path === '' ? k : `${path}.${k}`;
    if (k === '__proto__') return { field, key: k };
    if (k === 'constructor' && v !== null && typeof v === 'object' && Object.hasOwn(v, 'prototype')) {
      return { field, key: k };
    }
    const inner = poisonedKeyOf(v, field);
    if (inner) return inner;
  }
  return undefined;
};

/**
 * The `VALIDATION_ERROR` (422) of a JSON body refused for a {@link poisonedKeyOf} key: the body is valid JSON, so
 * "not valid JSON" would mislead; the message names the key and why it is refused.
 */
export const poisonedKeyError = (field: string, key: string): DomainError => {
  const reason =
    key === '__proto__'
      ? 'the key "__proto__" is refused: it would set the prototype of the object built from the body (prototype poisoning); rename or remove it'
      : 'a "constructor" key holding a "prototype" key is refused (prototype poisoning); rename or remove it';
  return new DomainError('VALIDATION_ERROR', `request body ${field}: ${reason}`, {
    issues: [{ field, location: 'body', message: reason }],
  });
};
