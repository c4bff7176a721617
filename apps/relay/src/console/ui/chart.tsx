// Events per day and the delivery success rate, drawn as SVG (no chart library: a
// bar per day and a line for the rate are a few dozen lines).
export interface UsageDay { date: string; events: number; deliveries: number; delivered: number; failed: number }

const WIDTH = 600;
const HEIGHT = 160;
const PAD = 24;

export function UsageChart({ days }: { days: UsageDay[] }) {
  const most = Math.max(1, ...days.map((day) => day.events));
  const step = (WIDTH - PAD * 2) / Math.max(1, days.length);
  const y = (value: number) => HEIGHT - PAD - (value / most) * (HEIGHT - PAD * 2);
  const rateY = (rate: number) => HEIGHT - PAD - rate * (HEIGHT - PAD * 2);
  const rates = days.map((day) => (day.delivered + day.failed > 0 ? day.delivered / (day.delivered + day.failed) : null));
  const ratePoints = rates.map((rate, index) => (rate === null ? null : `${PAD + step * index + step / 2},${rateY(rate)}`)).filter(Boolean).join(' ');
  const totals = days.reduce((sum, day) => ({ events: sum.events + day.events, delivered: sum.delivered + day.delivered, failed: sum.failed + day.failed }), { events: 0, delivered: 0, failed: 0 });
  const successRate = totals.delivered + totals.failed > 0 ? `${((totals.delivered / (totals.delivered + totals.failed)) * 100).toFixed(1)}%` : 'no finished deliveries';
  return (
    <figure class="chart">
      <svg id="usage-chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Events per day over ${days.length} days: ${totals.events} in all; delivery success rate ${successRate}`}>
        <line x1={PAD} y1={HEIGHT - PAD} x2={WIDTH - PAD} y2={HEIGHT - PAD} class="axis" />
        {days.map((day, index) => (
          <rect key={day.date} class="bar" x={PAD + step * index + 1} y={y(day.events)} width={Math.max(1, step - 2)} height={HEIGHT - PAD - y(day.events)}>
            <title>{`${day.date}: ${day.events} events, ${day.delivered} delivered, ${day.failed} failed`}</title>
          </rect>
        ))}
        {ratePoints && <polyline class="rate" points={ratePoints} />}
        {rates.map((rate, index) => (rate === null ? null : (
          <circle key={days[index]!.date} class="rate-point" cx={PAD + step * index + step / 2} cy={rateY(rate)} r={3}>
            <title>{`${days[index]!.date}: ${(rate * 100).toFixed(1)}% of finished deliveries succeeded`}</title>
          </circle>
        )))}
        <text x={PAD} y={PAD - 8} class="chart-label">{most} events</text>
        <text x={WIDTH - PAD} y={PAD - 8} class="chart-label rate-label" text-anchor="end">success rate (line, 0–100%)</text>
      </svg>
      <figcaption id="usage-summary">{totals.events.toLocaleString()} events in {days.length} days; delivery success rate {successRate} ({totals.delivered} delivered, {totals.failed} failed).</figcaption>
    </figure>
  );
}
