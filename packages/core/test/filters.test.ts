import { describe, expect, it } from 'vitest';
import { matchesFilter, parseFilterQuery, validateFilter, type FilterRequest } from '../src/index.ts';

const order: FilterRequest = {
  body: {
    type: 'order.created',
    amount: 120,
    currency: 'EUR',
    customer: { id: 'cus_1', email: 'ana@example.com', tags: ['vip', 'eu'] },
    items: [{ sku: 'A1', qty: 2 }, { sku: 'B2', qty: 1, options: [{ name: 'gift', value: true }] }],
    matrix: [[1, 2], [3, 4]],
    note: null,
  },
  headers: { 'content-type': 'application/json', 'x-shop': 'acme', 'x-retry': '3' },
  query: 'source=web&tag=a&tag=b&n=10',
  path: '/hooks/orders',
};

const matches = (filter: unknown, request: FilterRequest = order): boolean => matchesFilter(filter as never, request);

describe('matchesFilter: plain values', () => {
  it('matches everything with no filter or an empty one', () => {
    expect(matches(null)).toBe(true);
    expect(matches({})).toBe(true);
  });

  it('compares primitives by strict equality, without type coercion', () => {
    expect(matches({ body: { amount: 120 } })).toBe(true);
    expect(matches({ body: { amount: '120' } })).toBe(false);
    expect(matches({ body: { currency: 'USD' } })).toBe(false);
    expect(matches({ body: { note: null } })).toBe(true);
    expect(matches({ body: { missing: null } })).toBe(false);
  });

  it('matches nested objects on the listed keys only', () => {
    expect(matches({ body: { customer: { id: 'cus_1' } } })).toBe(true);
    expect(matches({ body: { customer: { id: 'cus_1', email: 'bob@example.com' } } })).toBe(false);
    expect(matches({ body: { customer: { address: { city: 'Paris' } } } })).toBe(false);
  });

  it('needs every part it names: body, headers, query and path together', () => {
    expect(matches({ body: { type: 'order.created' }, headers: { 'x-shop': 'acme' }, query: { source: 'web' }, path: '/hooks/orders' })).toBe(true);
    expect(matches({ body: { type: 'order.created' }, headers: { 'x-shop': 'other' } })).toBe(false);
    expect(matches({ path: '/hooks' })).toBe(false);
  });
});

describe('matchesFilter: arrays', () => {
  it('a primitive matches an array that contains it', () => {
    expect(matches({ body: { customer: { tags: 'vip' } } })).toBe(true);
    expect(matches({ body: { customer: { tags: 'us' } } })).toBe(false);
  });

  it('an array needs every one of its items contained, in any order', () => {
    expect(matches({ body: { customer: { tags: ['eu', 'vip'] } } })).toBe(true);
    expect(matches({ body: { customer: { tags: ['eu', 'us'] } } })).toBe(false);
    expect(matches({ body: { currency: ['EUR'] } })).toBe(false); // not an array
  });

  it('an object matches an array of objects when one item matches it', () => {
    expect(matches({ body: { items: { sku: 'B2' } } })).toBe(true);
    expect(matches({ body: { items: { sku: 'B2', qty: 2 } } })).toBe(false);
    expect(matches({ body: { items: [{ sku: 'A1' }, { sku: 'B2' }] } })).toBe(true);
    expect(matches({ body: { items: { options: { name: 'gift', value: true } } } })).toBe(true);
  });

  it('nested arrays: an array of arrays contains inner arrays by containment', () => {
    expect(matches({ body: { matrix: [[4]] } })).toBe(true);
    expect(matches({ body: { matrix: [[1, 2], [3]] } })).toBe(true);
    expect(matches({ body: { matrix: [[1, 4]] } })).toBe(false);
    expect(matches({ body: { matrix: { $eq: [[1, 2], [3, 4]] } } })).toBe(true);
  });

  it('query parameters repeated become arrays', () => {
    expect(parseFilterQuery('tag=a&tag=b&x=1')).toEqual({ tag: ['a', 'b'], x: '1' });
    expect(matches({ query: { tag: 'b' } })).toBe(true);
    expect(matches({ query: { tag: ['a', 'b'], source: 'web' } })).toBe(true);
  });
});

describe('matchesFilter: operators', () => {
  it('$eq and $neq compare whole values', () => {
    expect(matches({ body: { customer: { tags: { $eq: ['vip', 'eu'] } } } })).toBe(true);
    expect(matches({ body: { customer: { tags: { $eq: ['eu', 'vip'] } } } })).toBe(false);
    expect(matches({ body: { currency: { $neq: 'USD' } } })).toBe(true);
    expect(matches({ body: { missing: { $neq: 'USD' } } })).toBe(true);
  });

  it('$gt $gte $lt $lte compare numbers, numeric strings against numbers, and strings', () => {
    expect(matches({ body: { amount: { $gt: 100, $lte: 120 } } })).toBe(true);
    expect(matches({ body: { amount: { $gte: 121 } } })).toBe(false);
    expect(matches({ body: { amount: { $lt: 120 } } })).toBe(false);
    expect(matches({ headers: { 'x-retry': { $gte: 3 } } })).toBe(true);
    expect(matches({ query: { n: { $gt: 9 } } })).toBe(true);
    expect(matches({ body: { currency: { $gt: 'AAA' } } })).toBe(true);
  });

  it('$in and $nin: one of a list, or a substring of a string', () => {
    expect(matches({ body: { currency: { $in: ['EUR', 'USD'] } } })).toBe(true);
    expect(matches({ body: { currency: { $nin: ['EUR', 'USD'] } } })).toBe(false);
    expect(matches({ body: { customer: { tags: { $in: ['us', 'vip'] } } } })).toBe(true);
    expect(matches({ body: { currency: { $in: 'EUR,GBP' } } })).toBe(true);
    expect(matches({ body: { amount: { $in: 'EUR,GBP' } } })).toBe(false);
  });

  it('$startsWith and $endsWith work on strings', () => {
    expect(matches({ path: { $startsWith: '/hooks/' } })).toBe(true);
    expect(matches({ body: { type: { $endsWith: '.created' } } })).toBe(true);
    expect(matches({ body: { type: { $startsWith: 'invoice.' } } })).toBe(false);
  });

  it('$exist tells a present field (even null) from a missing one', () => {
    expect(matches({ body: { note: { $exist: true } } })).toBe(true);
    expect(matches({ body: { refund: { $exist: false } } })).toBe(true);
    expect(matches({ body: { refund: { $exist: true } } })).toBe(false);
    expect(matches({ headers: { authorization: { $exist: false } } })).toBe(true);
  });

  it('$or of objects, $and and $not', () => {
    expect(matches({ body: { $or: [{ currency: 'USD' }, { customer: { id: 'cus_1' } }] } })).toBe(true);
    expect(matches({ body: { $or: [{ currency: 'USD' }, { amount: { $lt: 10 } }] } })).toBe(false);
    expect(matches({ body: { amount: { $and: [{ $gt: 100 }, { $lt: 200 }] } } })).toBe(true);
    expect(matches({ body: { type: { $not: { $startsWith: 'order.' } } } })).toBe(false);
    expect(matches({ body: { $not: { currency: 'USD' } } })).toBe(true);
    expect(matches({ body: { type: { $not: 'invoice.paid' }, currency: 'EUR' } })).toBe(true);
  });
});

describe('matchesFilter: type mismatches never throw', () => {
  const odd: FilterRequest[] = [
    { body: 'plain text', headers: {}, query: '', path: '/' },
    { body: null, headers: {}, query: '', path: '' },
    { body: 42, headers: {}, query: 'a=%zz', path: '/' },
    { body: [1, 'two', null, { three: 3 }], headers: {}, query: {}, path: '/' },
  ];
  const filters = [
    { body: { a: { b: { c: 1 } } } },
    { body: { $gt: 5 } },
    { body: { $in: 'plain text and more' } },
    { body: [{ three: 3 }] },
    { body: { three: { $startsWith: 3 } } },
    { query: { a: { $exist: true } } },
    { body: 'plain text' },
  ];

  it('answers false or true, never throws', () => {
    for (const request of odd) for (const filter of filters) expect(() => matches(filter, request)).not.toThrow();
    expect(matches({ body: 'plain text' }, odd[0])).toBe(true);
    expect(matches({ body: { a: 1 } }, odd[0])).toBe(false);
    expect(matches({ body: { $gt: 5 } }, odd[2])).toBe(true);
    expect(matches({ body: [{ three: 3 }, 1] }, odd[3])).toBe(true);
    expect(matches({ body: { $in: 'plain text and more' } }, odd[0])).toBe(true);
  });

  it('an object key named like an inherited property does not match a missing field', () => {
    expect(matches({ body: { constructor: { $exist: true } } })).toBe(false);
    expect(matches({ body: { toString: { $exist: false } } })).toBe(true);
  });
});

describe('validateFilter', () => {
  it('accepts a valid filter', () => {
    expect(validateFilter({ body: { amount: { $gte: 1 }, $or: [{ a: 1 }, { b: { $exist: true } }] }, headers: { 'x-a': 'b' }, path: { $startsWith: '/' } })).toEqual([]);
  });

  it('names each problem by where it is', () => {
    expect(validateFilter([])).toEqual([{ field: 'filter', message: expect.stringContaining('must be an object') }]);
    expect(validateFilter({ bodies: {} })[0]!.field).toBe('filter.bodies');
    const errors = validateFilter({ body: { amount: { $gt: [1] }, a: { $regex: 'x' }, $or: [], b: { $exist: 'yes' }, c: { $in: 5 } } }, 'body.filter');
    expect(errors.map((error) => error.field)).toEqual([
      'body.filter.body.amount.$gt', 'body.filter.body.a.$regex', 'body.filter.body.$or', 'body.filter.body.b.$exist', 'body.filter.body.c.$in',
    ]);
  });

  it('refuses a filter nested too deep', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40; i += 1) deep = { a: deep };
    expect(validateFilter({ body: deep })[0]!.message).toContain('nested deeper');
  });
});
