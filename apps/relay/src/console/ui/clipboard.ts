// Copy buttons: the Clipboard API where the page may use it, else a sentence asking to copy by hand.

export async function copyText(text: string, setNote: (note: string) => void): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    setNote('Copied.');
  } catch {
    setNote('Select the text and copy it.');
  }
}

