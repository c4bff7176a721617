import { Migration } from '@mikro-orm/migrations';

/**
 * Tracing (docs/deployment.md#tracing): `event.trace_parent` holds the W3C `traceparent`
 * of the ingest span that stored the event, so each delivery attempt, made later and
 * perhaps by another process, is a child span in the same trace. Null when the relay that
 * stored the event was not tracing. A nullable column without a default: adding it
 * rewrites nothing.
 */
export class TraceParent extends Migration {
  override name = '016-trace-parent';

  override up(): void {
    this.addSql('alter table event add column trace_parent text;');
  }
}
