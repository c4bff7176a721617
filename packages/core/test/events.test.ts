import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeBody, encodeCursor, extractEventType, newId } from '../src/index.ts';

describe('extractEventType', () => {
  const json = Buffer.from('{"type":"order.created","id":1}');
  const none = {};

  it('prefers the x-event-type header', () => {
    expect(extractEventType({ 'x-event-type': 'invoice.paid' }, 'application/json', json)).toBe('invoice.paid');
    expect(extractEventType({ 'x-event-type': 'invoice.paid', 'x-github-event': 'push' }, 'application/json', json)).toBe('invoice.paid');
  });

  it('falls back to a top-level JSON type field, for +json media types too', () => {
    expect(extractEventType(none, 'application/json; charset=utf-8', json)).toBe('order.created');
    expect(extractEventType(none, 'application/cloudevents+json', json)).toBe('order.created');
    expect(extractEventType({ 'x-event-type': '  ' }, 'application/json', json)).toBe('order.created');
  });

  it('reads GitHub\'s event header, with the body\'s action after a dot where the event has one', () => {
    expect(extractEventType({ 'x-github-event': 'push' }, 'application/json', Buffer.from('{"ref":"refs/heads/main"}'))).toBe('push');
    expect(extractEventType({ 'x-github-event': 'pull_request' }, 'application/json', Buffer.from('{"action":"opened","number":1}'))).toBe('pull_request.opened');
    // Sent as a form (payload=…), the body is not read: the event alone.
    expect(extractEventType({ 'x-github-event': 'issues' }, 'application/x-www-form-urlencoded', Buffer.from('payload=%7B%22action%22%3A%22closed%22%7D'))).toBe('issues');
  });

  it('reads Shopify\'s topic header without parsing the body', () => {
    let parsed = 0;
    expect(extractEventType({ 'x-shopify-topic': 'orders/create' }, 'application/json', json, () => (parsed++, null))).toBe('orders/create');
    expect(parsed).toBe(0);
  });

  it('takes the inner event.type of a Slack event_callback, and type of other Slack payloads', () => {
    expect(extractEventType(none, 'application/json', Buffer.from('{"type":"event_callback","event":{"type":"app_mention"}}'))).toBe('app_mention');
    expect(extractEventType(none, 'application/json', Buffer.from('{"type":"event_callback","event":{"text":"no type"}}'))).toBe('event_callback');
    expect(extractEventType(none, 'application/json', Buffer.from('{"type":"url_verification","challenge":"x"}'))).toBe('url_verification');
  });

  it('drops NUL characters, which PostgreSQL text cannot hold, and cuts to 200 characters', () => {
    expect(extractEventType(none, 'application/json', Buffer.from('{"type":"a\\u0000b"}'))).toBe('ab');
    expect(extractEventType({ 'x-github-event': 'e'.repeat(199) }, 'application/json', Buffer.from('{"action":"opened"}'))).toHaveLength(200);
  });

  it('is null for other content, nested or non-string types and broken JSON', () => {
    expect(extractEventType(none, 'text/plain', json)).toBeNull();
    expect(extractEventType(none, 'application/json', Buffer.from('{"data":{"type":"x"}}'))).toBeNull();
    expect(extractEventType(none, 'application/json', Buffer.from('{"type":7}'))).toBeNull();
    expect(extractEventType(none, 'application/json', Buffer.from('{"type":'))).toBeNull();
    expect(extractEventType(none, 'application/json', Buffer.from('[{"type":"x"}]'))).toBeNull();
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
