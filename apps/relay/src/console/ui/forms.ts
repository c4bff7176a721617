// What the console's editing forms share: reading a form's fields, and putting a problem
// document's errors beside the fields they name (docs/api.md#validation) instead of in one
// line at the top, where a reader has to guess which field it meant.
import { useState } from 'preact/hooks';
import { ApiError, problemText } from './api.ts';

/** Messages by field, as the form names its inputs (`url`, `auth.password`); '' holds what names no field. */
export type FieldMessages = Record<string, string>;

/**
 * A failure's messages by field. A validation problem lists `errors[]` with fields like
 * `body.destination.url`; `prefix` (e.g. `body.destination.`) is cut so the key is what the
 * form calls the input. What names no field known to the form goes under '', with the
 * problem's detail and fix.
 */
export function messagesOf(failure: unknown, prefixes: string[] = ['body.'], known?: readonly string[]): FieldMessages {
  if (!(failure instanceof ApiError)) return { '': failure instanceof Error ? failure.message : String(failure) };
  const messages: FieldMessages = {};
  for (const entry of failure.problem.errors ?? []) {
    const prefix = prefixes.find((candidate) => entry.field.startsWith(candidate));
    const field = prefix === undefined ? entry.field : entry.field.slice(prefix.length);
    const target = known === undefined || known.includes(field) ? field : known.find((name) => field.startsWith(`${name}.`)) ?? '';
    messages[target] = messages[target] ? `${messages[target]}; ${entry.message}` : entry.message;
  }
  if (Object.keys(messages).length === 0 || messages[''] !== undefined) {
    messages[''] = messages[''] ? `${problemText(failure.problem)} (${messages['']})` : problemText(failure.problem);
  }
  return messages;
}

/** A form's submit: busy while it runs, its messages by field after a failure, a note after success. */
export function useSubmit(options: { prefixes?: string[]; known?: readonly string[] } = {}) {
  const [busy, setBusy] = useState(false);
  const [messages, setMessages] = useState<FieldMessages>({});
  const [note, setNote] = useState('');
  async function run(action: () => Promise<string | void>): Promise<boolean> {
    setBusy(true);
    setMessages({});
    setNote('');
    try {
      setNote((await action()) ?? '');
      return true;
    } catch (failure) {
      setMessages(failure instanceof FieldProblem ? failure.messages : messagesOf(failure, options.prefixes, options.known));
      return false;
    } finally {
      setBusy(false);
    }
  }
  return { busy, messages, note, run, setMessages };
}

/** A mistake the console finds before asking the relay (JSON that does not parse), shown beside its field. */
export class FieldProblem extends Error {
  readonly messages: FieldMessages;
  constructor(field: string, message: string) {
    super(message);
    this.messages = { [field]: message };
  }
}

/** The trimmed text of a form field ('' when the form has none by that name). */
export function textOf(form: HTMLFormElement, name: string): string {
  const field = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | null;
  return field ? field.value.trim() : '';
}

/** A whole number from a field, null when it is empty; a FieldProblem when it is not a number. */
export function integerOf(form: HTMLFormElement, name: string): number | null {
  const text = textOf(form, name);
  if (text === '') return null;
  if (!/^-?\d+$/.test(text)) throw new FieldProblem(name, 'Enter a whole number, or leave it empty.');
  return Number(text);
}

/** JSON typed into a field, null when it is empty; a FieldProblem naming the line when it does not parse. */
export function jsonOf(text: string, field: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    const position = /position (\d+)/.exec(String((error as Error).message))?.[1];
    const line = position === undefined ? '' : ` (line ${text.slice(0, Number(position)).split('\n').length})`;
    throw new FieldProblem(field, `This is not valid JSON${line}: ${(error as Error).message}`);
  }
}

/** Props that tie an input to its message: aria-invalid and aria-describedby. */
export function describedBy(messages: FieldMessages, field: string, id: string): { 'aria-invalid': 'true' | 'false'; 'aria-describedby': string } {
  return { 'aria-invalid': messages[field] ? 'true' : 'false', 'aria-describedby': `${id}-message` };
}
