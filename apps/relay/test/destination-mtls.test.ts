/**
 * Destination TLS (issue 31): a destination presents its client certificate to a receiver
 * that requires one (mTLS), and trusts the private CA it is given. The receiver is a real
 * node:https server; the certificates are fixtures (fixtures/tls/README.md says how they
 * were made).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DestinationTls } from '@hook/core';
import { DeliverySender } from '../src/delivery/sender.ts';

const fixture = (name: string): string => readFileSync(new URL(`fixtures/tls/${name}`, import.meta.url), 'utf8');
const CA = fixture('ca.crt');
const CLIENT_CERTIFICATE = fixture('client.crt');
const CLIENT_KEY = fixture('client.key');
/** A key that is not the client certificate's. */
const OTHER_KEY = fixture('other.key');

const BODY = Buffer.from('{"type":"invoice.paid"}');

describe('mTLS', () => {
  let server: Server;
  let url: string;
  /** The subject CN of each client certificate the receiver accepted, per request. */
  const clients: string[] = [];
  /** TLS connections the receiver has open now. */
  const open = new Set<TLSSocket>();
  let connections = 0;
  let sender: DeliverySender;

  beforeAll(async () => {
    server = createServer({ key: fixture('server.key'), cert: fixture('server.crt'), ca: CA, requestCert: true, rejectUnauthorized: true }, (request, response) => {
      clients.push((request.socket as TLSSocket).getPeerCertificate().subject.CN as string);
      request.resume();
      request.on('end', () => response.end('ok'));
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      connections += 1;
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    sender = new DeliverySender({ timeoutMs: 2000, allowPrivateDestinations: true });
  });
  afterAll(async () => {
    await sender.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const send = (tls: DestinationTls | null) => sender.send(url, {}, BODY, { destinationId: 'dst_mtls', auth: null, tls });

  it('without a client certificate the attempt fails with a TLS error saying one is required', async () => {
    const result = await send({ client_certificate: null, client_key: null, ca: CA });

    expect(result).toMatchObject({ status: null, body: null });
    expect(result.error).toBe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: the destination asks for a client certificate (mTLS) and none was presented; set one with hook destinations update dst_mtls --client-cert <file> --client-key <file>');
  });

  it("without the destination's CA the server's certificate is not trusted, and the error says how to trust it", async () => {
    const result = await send({ client_certificate: CLIENT_CERTIFICATE, client_key: CLIENT_KEY, ca: null });

    expect(result.status).toBeNull();
    expect(result.error).toMatch(/^SELF_SIGNED_CERT_IN_CHAIN: .*; the destination's server certificate is not trusted: if a private CA signed it, set that CA with hook destinations update dst_mtls --ca <file>$/);
  });

  it("with the destination's certificate, key and CA it succeeds, its connections kept alive from one send to the next", async () => {
    const tls = { client_certificate: CLIENT_CERTIFICATE, client_key: CLIENT_KEY, ca: CA };
    clients.length = 0;
    const connectionsBefore = connections;

    for (let i = 0; i < 10; i++) expect(await send(tls)).toMatchObject({ status: 200, body: 'ok', error: null });

    expect(clients).toEqual(Array(10).fill('Hook test destination'));
    // undici's pool opens a second TLS connection on the second request (any https origin,
    // not only this one), then reuses it: an agent made per send would open ten.
    expect(connections - connectionsBefore).toBeLessThanOrEqual(2);
  });

  it('a key that is not the certificate\'s, or text that is not PEM, gives a clear error before any connection', async () => {
    const connectionsBefore = connections;

    const mismatched = await send({ client_certificate: CLIENT_CERTIFICATE, client_key: OTHER_KEY, ca: CA });
    expect(mismatched).toMatchObject({ status: null, body: null });
    expect(mismatched.error).toMatch(/^the destination's client certificate or key could not be used: .*key values mismatch; set it again with hook destinations update dst_mtls --client-cert <file> --client-key <file>$/);

    const notPem = await send({ client_certificate: 'not a certificate', client_key: CLIENT_KEY, ca: CA });
    expect(notPem.error).toMatch(/^the destination's client certificate or key could not be used: .*no start line; set it again with hook destinations update dst_mtls --client-cert/);

    const noKey = await send({ client_certificate: CLIENT_CERTIFICATE, client_key: null, ca: CA });
    expect(noKey.error).toMatch(/^the destination's client certificate or key could not be used: a client certificate without its key;/);

    const badCa = await send({ client_certificate: CLIENT_CERTIFICATE, client_key: CLIENT_KEY, ca: 'not a CA' });
    expect(badCa.error).toBe("the destination's CA certificate could not be used: no PEM certificate (-----BEGIN CERTIFICATE-----) in it; set it again with hook destinations update dst_mtls --ca <file>");

    expect(connections).toBe(connectionsBefore);
  });

  it("close() closes the destinations' own connections too", async () => {
    const own = new DeliverySender({ timeoutMs: 2000, allowPrivateDestinations: true });
    const result = await own.send(url, {}, BODY, { destinationId: 'dst_close', auth: null, tls: { client_certificate: CLIENT_CERTIFICATE, client_key: CLIENT_KEY, ca: CA } });
    expect(result.status).toBe(200);
    const openBefore = open.size;
    expect(openBefore).toBeGreaterThan(0);

    await own.close();

    await expect.poll(() => open.size).toBeLessThan(openBefore);
  });
});
