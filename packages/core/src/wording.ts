/** How people read counts: "1 event", "3 events", "2 deliveries" — never "event(s)". */
export function countOf(count: number, one: string, many: string = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
}
