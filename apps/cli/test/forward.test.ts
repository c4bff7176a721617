/** Where `hook listen` forwards an event, and which headers go with it. */
import { describe, expect, it } from 'vitest';
import { headersToForward } from '../src/forward/local-forwarder.ts';
import { describeTarget, forwardUrl, parseForwardTarget } from '../src/forward/target.ts';
import { UsageError } from '../src/errors.ts';

describe('parseForwardTarget and forwardUrl', () => {
  it('forwards a port to 127.0.0.1, with the event path and query after it', () => {
    const target = parseForwardTarget('3000');
    expect(describeTarget(target)).toBe('http://127.0.0.1:3000/');
    expect(forwardUrl(target, '', '')).toBe('http://127.0.0.1:3000/');
    expect(forwardUrl(target, '/stripe', 'live=1')).toBe('http://127.0.0.1:3000/stripe?live=1');
  });

  it('puts the event path after the URL path or --path, and joins both queries', () => {
    expect(forwardUrl(parseForwardTarget('http://localhost:8000/hooks/'), '/a/b', '')).toBe('http://localhost:8000/hooks/a/b');
    expect(forwardUrl(parseForwardTarget('http://localhost:8000/hooks?token=1'), '', 'x=2')).toBe('http://localhost:8000/hooks?token=1&x=2');
    expect(forwardUrl(parseForwardTarget('3000', '/webhooks/stripe'), '', '')).toBe('http://127.0.0.1:3000/webhooks/stripe');
    expect(forwardUrl(parseForwardTarget('http://localhost:8000/ignored', '/used'), '/x', '')).toBe('http://localhost:8000/used/x');
    expect(forwardUrl(parseForwardTarget('localhost:4000'), '', '')).toBe('http://localhost:4000/');
    expect(forwardUrl(parseForwardTarget('https://[::1]:8443'), '', '')).toBe('https://[::1]:8443/');
  });

  it('refuses what is neither a port nor an http URL, as a usage error', () => {
    for (const bad of ['abc', '70000', '0', 'ftp://host/x']) expect(() => parseForwardTarget(bad), bad).toThrow(UsageError);
    expect(() => parseForwardTarget('3000', 'no-slash')).toThrow(UsageError);
  });
});

describe('headersToForward', () => {
  it('drops hop-by-hop headers and those Connection names, keeps the rest and sets content-length', () => {
    const forwarded = headersToForward(
      {
        host: 'relay.example', connection: 'keep-alive, x-hop', 'x-hop': '1', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked',
        'content-length': '999', 'content-type': 'application/json', 'webhook-id': 'evt_1', 'webhook-signature': 'v1,abc', 'x-custom': 'yes',
      },
      12,
    );
    expect(forwarded).toEqual({ 'content-type': 'application/json', 'webhook-id': 'evt_1', 'webhook-signature': 'v1,abc', 'x-custom': 'yes', 'content-length': '12' });
  });

  it('compares names without case, as the relay does (core\'s withoutHopByHop)', () => {
    const forwarded = headersToForward({ Host: 'relay.example', Connection: 'X-Hop', 'x-hop': '1', 'Content-Length': '999', 'Content-Type': 'text/plain' }, 3);
    expect(forwarded).toEqual({ 'Content-Type': 'text/plain', 'content-length': '3' });
  });
});
