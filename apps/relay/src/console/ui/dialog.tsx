// Confirming a destructive action: a modal <dialog> (showModal), so the browser traps focus
// in it, Esc cancels and focus goes back to the button that opened it. Nothing is sent
// until the confirm button is pressed; a failure stays in the dialog, beside the choice.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { messagesOf } from './forms.ts';

let nextDialogId = 0;

export interface ConfirmButtonProps {
  /** The button that opens the dialog. */
  label: string;
  /** The dialog's heading: the question ("Delete the endpoint orders?"). */
  title: string;
  /** What is lost or changed, in plain words. */
  children: ComponentChildren;
  /** The button that does it ("Delete endpoint"). */
  confirmLabel: string;
  onConfirm: () => Promise<unknown>;
  /** A class for the opening button (e.g. `danger`, `delete-endpoint`). */
  class?: string;
  danger?: boolean;
}

export function ConfirmButton({ label, title, children, confirmLabel, onConfirm, class: className, danger = true }: ConfirmButtonProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [id] = useState(() => `confirm-${++nextDialogId}`);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);
  const confirm = async () => {
    setBusy(true);
    setError('');
    try {
      await onConfirm();
      setOpen(false);
    } catch (failure) {
      setError(messagesOf(failure)['']!);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class={className} onClick={() => { setError(''); setOpen(true); }}>{label}</button>
      <dialog ref={dialog} class="confirm-dialog" aria-labelledby={`${id}-title`} aria-describedby={`${id}-body`} onClose={() => setOpen(false)}>
        <h2 id={`${id}-title`}>{title}</h2>
        <div id={`${id}-body`}>{children}</div>
        <p class="error" role="alert">{error}</p>
        <div class="dialog-actions">
          <button type="button" class="dialog-cancel" onClick={() => setOpen(false)} autofocus>Cancel</button>
          <button type="button" class={danger ? 'danger dialog-confirm' : 'primary dialog-confirm'} disabled={busy} onClick={confirm}>{confirmLabel}</button>
        </div>
      </dialog>
    </>
  );
}
