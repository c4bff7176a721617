/**
 * Stream lines for a terminal (`hook events tail`, the connection status line): coloured
 * by tone and cut to the terminal's width with "…". A line that wraps puts its last
 * cells on a row of their own (an endpoint id alone on a line) and leaves a status line
 * that cannot be rewritten in place, so a line is cut, never wrapped. Loaded only when a
 * stream writes to a terminal.
 */
import { styleText } from 'node:util';
import stringWidth from 'string-width';
import { type Cell, type Line, type Tone } from '../output/view.ts';

const TONE_FORMATS: Record<Tone, Parameters<typeof styleText>[0]> = { good: 'green', bad: 'red', warn: 'yellow', dim: 'dim' };
const CELL_GAP = '  ';
const ELLIPSIS = '…';
/** Control characters (an event type can be any JSON string): shown as "�" so they can neither break the line nor move the cursor. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

const graphemes = new Intl.Segmenter();

interface Piece {
  text: string;
  tone?: Tone;
}

/** Local time of day, `HH:MM:SS`. */
function timeOfDay(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':');
}

function pieceOf(cell: Cell): Piece {
  if (typeof cell === 'string') return { text: cell };
  if ('at' in cell) return { text: timeOfDay(cell.at), tone: 'dim' };
  return { text: cell.text, tone: cell.tone };
}

/** The longest start of `text` that is at most `columns` wide. */
function widestStart(text: string, columns: number): string {
  let kept = '';
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const segmentWidth = stringWidth(segment);
    if (width + segmentWidth > columns) break;
    kept += segment;
    width += segmentWidth;
  }
  return kept;
}

/** Pieces cut to `columns` in all: the piece that does not fit ends in "…" and nothing follows it. */
function fitPieces(pieces: readonly Piece[], columns: number): Piece[] {
  const fitted: Piece[] = [];
  let room = columns;
  for (const piece of pieces) {
    const width = stringWidth(piece.text);
    if (width <= room) {
      fitted.push(piece);
      room -= width;
      continue;
    }
    const kept = room >= 1 ? widestStart(piece.text, room - 1) : '';
    if (room >= 1) fitted.push({ ...piece, text: `${kept.trimEnd()}${ELLIPSIS}` });
    break;
  }
  return fitted;
}

function styled(piece: Piece, stream: NodeJS.WritableStream): string {
  return piece.tone ? styleText(TONE_FORMATS[piece.tone], piece.text, { stream: stream as NodeJS.WriteStream }) : piece.text;
}

/**
 * The line as a terminal shows it: at most `columns` wide, cut with "…", times as the
 * local time of day, colours when `stream` takes them (styleText leaves text plain for
 * NO_COLOR and dumb terminals).
 */
export function terminalLine(line: Line, columns: number, stream: NodeJS.WritableStream): string {
  const pieces: Piece[] = [];
  for (const [index, cell] of line.entries()) {
    if (index > 0) pieces.push({ text: CELL_GAP });
    const piece = pieceOf(cell);
    pieces.push({ ...piece, text: piece.text.replace(CONTROL_CHARACTERS, '\uFFFD') });
  }
  return fitPieces(pieces, columns).map((piece) => styled(piece, stream)).join('');
}

/** Plain text cut to `columns` with "…" (the status line). */
export function fitText(text: string, columns: number): string {
  return fitPieces([{ text: text.replace(CONTROL_CHARACTERS, '\uFFFD') }], columns).map((piece) => piece.text).join('');
}
