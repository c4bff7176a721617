// Times as people read them: "12 s ago", "in 2 min", with the exact time on hover
// (<time datetime title>). One shared ticker re-renders every shown time every few
// seconds, so a list of 500 rows costs one timer, not 500.
import { useEffect, useState } from 'preact/hooks';

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

/** A span of time in the largest unit that fits: 12 s, 3 min, 5 h, 2 d. */
export function spanText(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.round(hours / 24)} d`;
}

/** "12 s ago" for a past instant, "in 2 min" for a future one, "now" within a second. */
export function relativeText(at: number, now: number): string {
  const delta = at - now;
  if (Math.abs(delta) < 1000) return 'now';
  return delta < 0 ? `${spanText(-delta)} ago` : `in ${spanText(delta)}`;
}

export function absoluteText(iso: string): string {
  return new Date(iso).toLocaleString();
}

/** A relative time that keeps itself current; the exact time is its title and datetime. */
export function RelativeTime({ iso, className }: { iso: string; className?: string }) {
  const now = useNow();
  return <time class={className} dateTime={iso} title={absoluteText(iso)}>{relativeText(Date.parse(iso), now)}</time>;
}

/** The clock time alone (14:05:12), for "Next attempt in 2 min (14:05:12)". */
export function clockText(iso: string): string {
  return new Date(iso).toLocaleTimeString();
}
