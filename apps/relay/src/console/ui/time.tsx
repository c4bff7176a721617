// Times as people read them: "12 s ago", "in 2 min", with the exact time on hover
// (<time datetime title>). One shared ticker re-renders every shown time every few
// seconds, so a list of 500 rows costs one timer, not 500.
import { useEffect, useState } from 'preact/hooks';
import { absoluteText, relativeText } from './time-text.ts';

export { absoluteText, clockText, relativeText, spanText } from './time-text.ts';

const TICK_MS = 5_000;
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

/** Re-renders the calling component on the shared tick; returns the current time. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const listener = () => setNow(Date.now());
    listeners.add(listener);
    timer ??= setInterval(() => { for (const tick of listeners) tick(); }, TICK_MS);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && timer !== undefined) { clearInterval(timer); timer = undefined; }
    };
  }, []);
  return now;
}

/** A relative time that keeps itself current; the exact time is its title and datetime. */
export function RelativeTime({ iso, className }: { iso: string; className?: string }) {
  const now = useNow();
  return <time class={className} dateTime={iso} title={absoluteText(iso)}>{relativeText(Date.parse(iso), now)}</time>;
}
