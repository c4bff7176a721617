// How the console words a time: pure functions (time.tsx renders them; unit tests run them).

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

/** The clock time alone (14:05:12), for "Next attempt in 2 min (14:05:12)". */
export function clockText(iso: string): string {
  return new Date(iso).toLocaleTimeString();
}
