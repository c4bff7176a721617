import { describe, expect, it } from 'vitest';
import { prepareDelivery, requestBody, transformedUrl, type StoredDelivery } from '../src/delivery/prepare.ts';
import type { TransformOutcome, TransformRequest, TransformRunner } from '../src/transformations/types.ts';

/** A runner that applies `change` to the request (no sandbox: this tests the step around it). */
function fakeRunner(change: (request: TransformRequest) => TransformOutcome): TransformRunner & { calls: number } {
  const runner = {
    calls: 0,
    check: async () => null,
    run: async (_code: string, request: TransformRequest) => {
      runner.calls += 1;
      return change(structuredClone(request));
    },
    close: async () => undefined,
  };
  return runner;
}

const stored: StoredDelivery = {
  id: 'evt_1', type: 'order.created', method: 'POST', path: '', query: 'a=1',
  headers: { 'content-type': 'application/json', 'x-shop': 'acme', connection: 'keep-alive' },
  body: Buffer.from('{"type":"order.created","amount":5}'), contentType: 'application/json',
  endpointId: 'ep_1', endpointName: 'orders', transformationCode: null, filter: null,
};

describe('prepareDelivery', () => {
  it('leaves an endpoint without transformation or filter untouched, without running anything', async () => {
    const runner = fakeRunner(() => { throw new Error('not called'); });
    expect(await prepareDelivery(runner, stored, true)).toEqual({ kind: 'send', request: null });
    expect(runner.calls).toBe(0);
  });

  it('filters the stored request without a transformation, and skips the filter when asked (replay)', async () => {
    const filter = { body: { amount: { $gt: 10 } } };
    expect(await prepareDelivery(undefined, { ...stored, filter }, true)).toEqual({ kind: 'filtered' });
    expect(await prepareDelivery(undefined, { ...stored, filter }, false)).toEqual({ kind: 'send', request: null });
    expect(await prepareDelivery(undefined, { ...stored, filter: { path: '/' } }, true)).toEqual({ kind: 'send', request: null });
  });

  it('encodes an object body as JSON with its content type, drops hop-by-hop headers, keeps the type the code set', async () => {
    const runner = fakeRunner((request) => ({ ok: true, request: { ...request, headers: { ...request.headers, 'Content-Type': 'text/plain' }, body: { a: 1 } }, type: 'x.y', logs: [] }));
    const prepared = await prepareDelivery(runner, { ...stored, transformationCode: 'code' }, true);
    expect(prepared).toMatchObject({ kind: 'send', newType: { type: 'x.y' } });
    if (prepared.kind !== 'send' || !prepared.request) throw new Error('expected a transformed request');
    expect(prepared.request.body.toString()).toBe('{"a":1}');
    expect(prepared.request.headers).toEqual({ 'content-type': 'application/json', 'x-shop': 'acme' });
    expect(prepared.request.path).toBe(''); // '/' in, '/' out: nothing appended
  });

  it('sends a string body as UTF-8 with the returned content type', async () => {
    const runner = fakeRunner((request) => ({ ok: true, request: { ...request, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'héllo' }, logs: [] }));
    const prepared = await prepareDelivery(runner, { ...stored, transformationCode: 'code' }, true);
    if (prepared.kind !== 'send' || !prepared.request) throw new Error('expected a transformed request');
    expect(prepared.request.body.equals(Buffer.from('héllo', 'utf8'))).toBe(true);
    expect(prepared.request.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('turns a failed run into transformation_failed with the line', async () => {
    const runner = fakeRunner(() => ({ ok: false, error: { message: 'TypeError: x is undefined', line: 3 }, logs: [] }));
    expect(await prepareDelivery(runner, { ...stored, transformationCode: 'code' }, true))
      .toEqual({ kind: 'failed', error: 'transformation_failed: TypeError: x is undefined (line 3)' });
  });

  it('filters the transformed request', async () => {
    const runner = fakeRunner((request) => ({ ok: true, request: { ...request, body: { priority: 'low' } }, logs: [] }));
    expect(await prepareDelivery(runner, { ...stored, transformationCode: 'code', filter: { body: { priority: 'high' } } }, true)).toEqual({ kind: 'filtered' });
  });
});

describe('transformedUrl', () => {
  const request = (path: string, query: string) => ({ headers: {}, body: Buffer.alloc(0), path, query });

  it('appends the path to the destination path and merges the query', () => {
    expect(transformedUrl('https://example.com/hooks?k=1&v=1', request('/orders', 'v=2&v=3&x=y'))).toBe('https://example.com/hooks/orders?k=1&v=2&v=3&x=y');
    expect(transformedUrl('https://example.com/', request('/a/b', ''))).toBe('https://example.com/a/b');
    expect(transformedUrl('https://example.com/hooks', request('', ''))).toBe('https://example.com/hooks');
    expect(transformedUrl('https://example.com/hooks?k=1', null)).toBe('https://example.com/hooks?k=1');
  });
});

describe('requestBody', () => {
  it('parses JSON content, else gives the text', () => {
    expect(requestBody(Buffer.from('{"a":1}'), 'application/vnd.api+json')).toEqual({ a: 1 });
    expect(requestBody(Buffer.from('{broken'), 'application/json')).toBe('{broken');
    expect(requestBody(Buffer.from('a=1&b=2'), 'application/x-www-form-urlencoded')).toBe('a=1&b=2');
  });
});
