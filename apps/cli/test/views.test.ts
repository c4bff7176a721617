import { describe, expect, it } from 'vitest';
import { renderPlain, statusCell, type View } from '../src/output/view.ts';
import { renderForTerminal } from '../src/ui/render-view.ts';

const view: View = [
  { kind: 'fields', rows: [['Id', 'ep_1'], ['Status', statusCell('paused')]] },
  { kind: 'heading', text: 'Events' },
  {
    kind: 'table',
    columns: [{ header: 'Id' }, { header: 'Attempts', align: 'right' }, { header: 'Type' }],
    rows: [['evt_1', '3', 'invoice.paid'], ['evt_22', '12', { text: 'failed', tone: 'bad' }]],
    empty: 'none',
  },
];

describe('renderPlain', () => {
  it('aligns labels and columns, right-aligns numbers, and adds no escape codes', () => {
    expect(renderPlain(view)).toBe(
      'Id:      ep_1\n' +
      'Status:  paused\n' +
      '\n' +
      'Events\n' +
      'ID      ATTEMPTS  TYPE\n' +
      'evt_1          3  invoice.paid\n' +
      'evt_22        12  failed\n',
    );
  });

  it('shows the empty text for a table without rows', () => {
    expect(renderPlain([{ kind: 'table', columns: [{ header: 'Id' }], rows: [], empty: 'No endpoints yet.' }])).toBe('No endpoints yet.\n');
  });
});

describe('renderForTerminal', () => {
  it('lays out the same content, never cutting a row narrower than its content', () => {
    const text = renderForTerminal(view, 20).replace(/\x1b\[[0-9;]*m/g, '');
    expect(text).toMatch(/^ID +ATTEMPTS +TYPE$/m);
    expect(text).toMatch(/^evt_22 +12 +failed$/m);
    expect(text).toMatch(/^evt_1 +3 +invoice\.paid$/m);
    expect(text).toMatch(/^Status: +paused$/m);
  });
});

describe('signature verification in views', () => {
  const event = {
    id: 'evt_01M89BZYBPPK4RNNJABXPSBXY6', endpoint_id: 'ep_01M89BZYBPPK4RNNJABXPSBXY6', type: 'push', method: 'POST', path: '', query: '',
    content_type: 'application/json', size: 30, received_at: '2026-11-25T12:48:20.000Z', status: 'pending' as const,
  };

  it('a tail line ends with what the check found, and says nothing for an endpoint that verifies nothing', async () => {
    const { tailLine } = await import('../src/views.ts');
    const { plainLine } = await import('../src/output/view.ts');
    const line = (verification: unknown) => plainLine(tailLine({ type: 'event.received', version: 1, event: { ...event, verification } } as never, 'github'));
    expect(line({ provider: 'github', verified: true, reason: null })).toMatch(/30 B\s+github verified$/);
    expect(line({ provider: 'stripe', verified: false, reason: 'timestamp_outside_tolerance' })).toMatch(/stripe unverified: timestamp outside tolerance$/);
    expect(line(null)).toMatch(/30 B$/);
  });

  it('hook events get shows a Signature line', async () => {
    const { eventView } = await import('../src/views.ts');
    const view = eventView({ ...event, headers: {}, attempt_count: 0, next_attempt_at: null, body: '{}', body_encoding: 'utf8', attempts: [], deliveries: [], verification: { provider: 'slack', verified: false, reason: 'missing_header' } } as never);
    expect(renderPlain(view)).toMatch(/Signature:\s+slack unverified: missing header/);
  });

  it('hook events get counts what the last attempt sent and what its answer carried', async () => {
    const { eventView } = await import('../src/views.ts');
    const attempt = (n: number, extra: object) => ({ id: `att_${n}`, destination_id: 'dst_1', n, trigger: 'auto', started_at: '2026-11-25T12:48:20.000Z', duration_ms: 7, response_status: 200, response_body: null, error: null, ...extra });
    const base = { ...event, headers: {}, attempt_count: 2, next_attempt_at: null, body: '{}', body_encoding: 'utf8', deliveries: [], verification: null };
    const request = { headers: { 'webhook-id': 'evt_1', 'webhook-signature': 'v1,x', authorization: '[redacted]', '…': '4 more headers not kept' }, body: '{"a":1}', body_encoding: 'utf8', body_truncated: false, body_is_event_body: false };
    const view = eventView({ ...base, attempts: [attempt(1, { request: null, response_headers: null }), attempt(2, { request, response_headers: { 'content-type': 'text/plain' } })] } as never);
    expect(renderPlain(view)).toContain('Last attempt sent 7 headers (3 kept) and a transformed body; its answer had 1 header (--json: .attempts[-1].request, .response_headers)');
    const before = eventView({ ...base, attempts: [attempt(1, { request: null, response_headers: null })] } as never);
    expect(renderPlain(before)).not.toContain('Last attempt');
  });

  it('hook events get names the kind of a failed attempt beside the relay\'s words (a relay without failure_kind: the words alone)', async () => {
    const { eventView } = await import('../src/views.ts');
    const attempt = (n: number, extra: object) => ({ id: `att_${n}`, destination_id: 'dst_1', n, trigger: 'auto', started_at: '2026-11-25T12:48:20.000Z', duration_ms: 7, response_body: null, request: null, response_headers: null, ...extra });
    const base = { ...event, headers: {}, attempt_count: 3, next_attempt_at: null, body: '{}', body_encoding: 'utf8', deliveries: [], verification: null };
    const view = eventView({
      ...base,
      attempts: [
        attempt(1, { response_status: null, error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9', failure_kind: 'connection_refused' }),
        attempt(2, { response_status: 503, error: null, failure_kind: 'http_5xx' }),
        attempt(3, { response_status: null, error: 'no answer within 15000 ms (HOOK_DELIVERY_TIMEOUT)' }),
      ],
    } as never);
    const text = renderPlain(view);
    expect(text).toContain('connection_refused: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9');
    expect(text).toMatch(/ 503\b/);
    expect(text).not.toContain('http_5xx');
    expect(text).toMatch(/ no answer within 15000 ms \(HOOK_DELIVERY_TIMEOUT\)/);
    expect(text).not.toContain('timeout:');
  });
});

describe('attempt lines in hook events tail', () => {
  const finished = {
    type: 'attempt.finished' as const, version: 1, event_id: 'evt_01M89BZYBPPK4RNNJABXPSBXY6', endpoint_id: 'ep_01M89BZYBPPK4RNNJABXPSBXY6', event_status: 'retrying' as const,
    attempt: { id: 'att_1', n: 1, trigger: 'auto' as const, started_at: '2026-11-25T12:48:20.000Z', duration_ms: 7, response_status: 200, error: null },
  };
  const line = async (message: object) => {
    const { tailLine } = await import('../src/views.ts');
    const { plainLine } = await import('../src/output/view.ts');
    return plainLine(tailLine({ ...finished, ...message } as never, 'orders'));
  };

  it('show the delivery\'s own status and destination, then the event\'s status when it differs', async () => {
    const url = { status: 'delivered', destination: { id: 'dst_1', type: 'url', url: 'https://user:pw@audit.example.com:8443/hooks?token=x' } };
    expect(await line(url)).toBe('2026-11-25T12:48:20Z  delivered  evt_01M89BZYBPPK4RNNJABXPSBXY6  200  7 ms  orders → audit.example.com:8443  attempt 1 (auto)  event retrying');
    expect(await line({ status: 'retrying', destination: { id: 'dst_2', type: 'cli' } })).toMatch(/ {2}orders → hook listen {2}attempt 1 \(auto\)$/);
  });

  it('from a relay that sends neither, show the event\'s status and the endpoint alone, as before', async () => {
    expect(await line({})).toBe('2026-11-25T12:48:20Z  retrying   evt_01M89BZYBPPK4RNNJABXPSBXY6  200  7 ms  orders  attempt 1 (auto)');
  });
});
