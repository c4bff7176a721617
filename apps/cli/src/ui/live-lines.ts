/**
 * Lines that arrive one by one (`hook events tail` on a terminal), shown with ink's
 * <Static>: each line is written once, above nothing, and never redrawn, so the
 * terminal's scrollback keeps them. Loaded only when stdout is a TTY.
 *
 * ink writes to a stream; the stream given here hands every byte to `write` (the
 * output module's), so stdout still has one writer.
 */
import { Writable } from 'node:stream';
import { createElement as h } from 'react';
import { render, Static, Text, type Instance } from 'ink';
import type { Tone } from '../output/view.ts';

export interface LiveLine {
  text: string;
  tone?: Tone;
}

export interface LiveLines {
  add(line: LiveLine): void;
  /** Unmounts ink; every line added has been written. */
  close(): Promise<void>;
}

const TONE_STYLES: Record<Tone, { color?: string; dimColor?: boolean }> = {
  good: { color: 'green' },
  bad: { color: 'red' },
  warn: { color: 'yellow' },
  dim: { dimColor: true },
};

/** Lines per <Static> instance: a new instance (new key) starts an empty list, so memory does not grow with the tail. */
const LINES_PER_GENERATION = 500;

interface Keyed extends LiveLine {
  key: number;
}

export function renderLiveLines(terminal: { write(bytes: Uint8Array): void; columns: number | undefined }): LiveLines {
  const stdout = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        terminal.write(chunk);
        done();
      },
    }),
    { isTTY: true, columns: terminal.columns ?? 80, rows: 24 },
  );
  let generation = 0;
  let lines: Keyed[] = [];
  let next = 0;
  const tree = () =>
    h(Static<Keyed>, {
      key: generation,
      items: lines,
      children: (line: Keyed) => h(Text, { key: line.key, ...(line.tone ? TONE_STYLES[line.tone] : {}) }, line.text),
    });
  const instance: Instance = render(tree(), { stdout, patchConsole: false, exitOnCtrlC: false, interactive: true });
  return {
    add(line) {
      if (lines.length >= LINES_PER_GENERATION) {
        generation++;
        lines = [];
      }
      lines = [...lines, { ...line, key: next++ }];
      instance.rerender(tree());
    },
    async close() {
      instance.unmount();
      await instance.waitUntilExit().catch(() => undefined);
    },
  };
}
