import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output } from '../src/output/index.ts';
import { plainLine } from '../src/output/view.ts';
import { formatDuration, reminderAtMs } from '../src/stream-connection.ts';
import { fitText, terminalLine } from '../src/ui/terminal-line.ts';

/** Streams that say they are terminals (no colours: PassThrough has no hasColors). */
function terminal(columns: number) {
  const stdout = Object.assign(new PassThrough(), { isTTY: true, columns });
  const stderr = Object.assign(new PassThrough(), { isTTY: true, columns });
  const text = { stdout: '', stderr: '', both: '' };
  stdout.on('data', (chunk: Buffer) => ((text.stdout += chunk.toString()), (text.both += chunk.toString())));
  stderr.on('data', (chunk: Buffer) => ((text.stderr += chunk.toString()), (text.both += chunk.toString())));
  return { stdout, stderr, text };
}

const CLEAR_ROW = '\r\x1b[2K';

describe('terminal lines', () => {
  const stream = new PassThrough();

  it('cuts a line to the width with "…", never longer, and keeps short lines whole', () => {
    const line = ['12345', { text: 'delivered', tone: 'good' as const }, 'a-long-endpoint-name', 'POST /path'];
    expect(terminalLine(line, 80, stream)).toBe('12345  delivered  a-long-endpoint-name  POST /path');
    expect(terminalLine(line, 30, stream)).toBe('12345  delivered  a-long-endp…');
    expect([...terminalLine(line, 30, stream)]).toHaveLength(30);
    expect(terminalLine(line, 17, stream)).toBe('12345  delivered…'); // the gap before a cell that does not fit is cut too
    expect(terminalLine(line, 1, stream)).toBe('…');
  });

  it('counts wide characters as two columns and shows control characters as �', () => {
    expect(terminalLine(['注文が作成されました'], 9, stream)).toBe('注文が作…'); // 4 × 2 columns + "…"
    expect(terminalLine(['a\nb\x1b[2Jc'], 80, stream)).toBe('a�b�[2Jc');
    expect(plainLine(['a\nb', 'c\rd'])).toBe('a�b  c�d');
    expect(fitText('Connection lost 42 s ago; reconnecting (try 7)…', 20)).toBe('Connection lost 42…') // no space left before the …;
  });

  it('shows a moment as the local time of day on a terminal and as UTC seconds in plain text', () => {
    const at = '2026-11-25T12:48:20.123Z';
    const local = new Date(at);
    const clock = [local.getHours(), local.getMinutes(), local.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':');
    expect(terminalLine([{ at }, 'received'], 80, stream)).toBe(`${clock}  received`);
    expect(plainLine([{ at }, 'received'])).toBe('2026-11-25T12:48:20Z  received');
  });
});

describe('connection reports', () => {
  it('remind at 30 s, then at gaps doubling up to 5 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(reminderAtMs)).toEqual([30_000, 90_000, 210_000, 450_000, 750_000, 1_050_000, 1_350_000]);
  });

  it('say durations as people do', () => {
    expect([0, 400, 42_000, 60_000, 185_000, 3_600_000, 7_440_000].map(formatDuration)).toEqual(['0 s', '0 s', '42 s', '1 min', '3 min 5 s', '1 h', '2 h 4 min']);
  });
});

describe('Output status line', () => {
  it('is rewritten in place, stays below other output, and can be kept as a line of its own', async () => {
    const { stdout, stderr, text } = terminal(40);
    const out = new Output({ stdout, stderr }, { json: false });
    await out.prepareStream();
    expect(out.status('Connection lost 1 s ago')).toBe(true);
    expect(out.status('Connection lost 2 s ago')).toBe(true);
    out.record({}, ['event line']);
    out.note('a note');
    expect(text.both).toBe(
      `Connection lost 1 s ago${CLEAR_ROW}Connection lost 2 s ago` +
        `${CLEAR_ROW}event line\nConnection lost 2 s ago` +
        `${CLEAR_ROW}a note\nConnection lost 2 s ago`,
    );
    text.both = '';
    out.status('Reconnected after 2 s down; no events were missed', { keep: true });
    out.note('after');
    expect(text.both).toBe(`${CLEAR_ROW}Reconnected after 2 s down; no events…\nafter\n`); // cut to 39 columns
  });

  it('is not there in a pipe or with --json: the caller prints lines instead', () => {
    const piped = new Output({ stdout: new PassThrough(), stderr: new PassThrough() }, { json: false });
    expect(piped.status('x')).toBe(false);
    const { stdout, stderr } = terminal(80);
    expect(new Output({ stdout, stderr }, { json: true }).status('x')).toBe(false);
  });

  it('holds records back while a catch-up is written first', async () => {
    const { stdout, stderr, text } = terminal(80);
    const out = new Output({ stdout, stderr }, { json: false });
    await out.prepareStream();
    const held = out.holdRecords();
    out.record({}, ['live 1']);
    held.first({}, ['missed 1']);
    out.record({}, ['live 2']);
    expect(text.stdout).toBe('missed 1\n');
    held.release();
    out.record({}, ['live 3']);
    expect(text.stdout).toBe('missed 1\nlive 1\nlive 2\nlive 3\n');
  });
});
