// A copy button that says what happened in words beside it (a polite live region).
import { useEffect, useState } from 'preact/hooks';
import { copyText } from './clipboard.ts';

export function CopyButton({ text, label = 'Copy', what, id, className }: { text: string | (() => string); label?: string; what?: string; id?: string; className?: string }) {
  const [note, setNote] = useState('');
  useEffect(() => {
    if (!note) return;
    const timeout = setTimeout(() => setNote(''), 2_000);
    return () => clearTimeout(timeout);
  }, [note]);
  return (
    <span class="copy">
      <button type="button" id={id} class={`copy-button ${className ?? ''}`} aria-label={what ? `${label} ${what}` : undefined} onClick={() => copyText(typeof text === 'function' ? text() : text, setNote)}>{label}</button>
      <span class="copy-note" role="status">{note}</span>
    </span>
  );
}
