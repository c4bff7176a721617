import { Migration } from '@mikro-orm/migrations';
import { withShortLocks } from './short-locks.ts';

/**
 * Queue destinations (issue 31, docs/delivery.md#queue-destinations) in `destination.type`:
 * 009 allowed only 'cli' and 'url', and 023 added their columns but not their types, so
 * storing an amqp, nats, redis or mqtt destination broke the check. The types are listed
 * here, not imported: a migration keeps the schema of its release.
 *
 * The wider check is added NOT VALID (no rows read under the table's exclusive lock, taken
 * with a short lock timeout and retried, as ingest reads destinations), then validated
 * under a lock that lets reads and writes go on. Every row already passes: 'cli' and 'url'
 * are in the new list.
 */
export class QueueDestinationTypes extends Migration {
  override name = '024-queue-destination-types';

  override up(): void {
    this.addSql(withShortLocks(`
      alter table destination drop constraint if exists destination_type_check;
      alter table destination add constraint destination_type_check check (type in ('cli', 'url', 'amqp', 'nats', 'redis', 'mqtt')) not valid`));
    this.addSql('alter table destination validate constraint destination_type_check;');
  }
}
