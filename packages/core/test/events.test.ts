import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeBody, encodeCursor, extractEventType, newId } from '../src/index.ts';

describe('extractEventType', () => {
  const json = Buffer.from('{"type":"order.created","id":1}');

  it('prefers the x-event-type header', () => {
    expect(extractEventType('invoice.paid', 'application/json', json)).toBe('invoice.paid');
  });

  it('falls back to a top-level JSON type field, for +json media types too', () => {
    expect(extractEventType(undefined, 'application/json; charset=utf-8', json)).toBe('order.created');
    expect(extractEventType(undefined, 'application/cloudevents+json', json)).toBe('order.created');
  });

  it('drops NUL characters, which PostgreSQL text cannot hold', () => {
    expect(extractEventType(undefined, 'application/json', Buffer.from('{"type":"a\\u0000b"}'))).toBe('ab');
  });

  it('is null for other content, nested or non-string types and broken JSON', () => {
    expect(extractEventType(undefined, 'text/plain', json)).toBeNull();
    expect(extractEventType(undefined, 'application/json', Buffer.from('{"data":{"type":"x"}}'))).toBeNull();
    expect(extractEventType(undefined, 'application/json', Buffer.from('{"type":7}'))).toBeNull();
    expect(extractEventType(undefined, 'application/json', Buffer.from('{"type":'))).toBeNull();
    expect(extractEventType(undefined, 'application/json', Buffer.from('[{"type":"x"}]'))).toBeNull();
  });
});

describe('encodeBody', () => {
  it('keeps UTF-8 as text and anything else as base64', () => {
    expect(encodeBody(Buffer.from('héllo'))).toEqual({ body: 'héllo', body_encoding: 'utf8' });
    const binary = Buffer.from([0xff, 0x00, 0xfe]);
    expect(encodeBody(binary)).toEqual({ body: binary.toString('base64'), body_encoding: 'base64' });
    expect(encodeBody(Buffer.from('\uFEFFbom'))).toEqual({ body: '\uFEFFbom', body_encoding: 'utf8' });
  });
});

describe('cursors', () => {
  it('round-trip an id and reject anything hand-made', () => {
    const id = newId('event');
    expect(decodeCursor(encodeCursor(id))).toBe(id);
    expect(decodeCursor(id)).toBeNull();
    expect(decodeCursor('not a cursor!')).toBeNull();
    expect(decodeCursor(Buffer.from('v1:evt_x').toString('base64url'))).toBeNull();
  });
});
