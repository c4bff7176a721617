import { Migration } from '@mikro-orm/migrations';

/**
 * Transformations and filters (issue 7):
 * - `endpoint.transformation_code`: JavaScript run in the sandbox before each delivery
 *   (docs/transformations.md); null = deliver the stored bytes as they are;
 * - `endpoint.filter`: the JSON match document (docs/filters.md); null = deliver all;
 * - event status `filtered`: the endpoint's filter did not match, nothing was sent.
 */
export class Transformations extends Migration {
  override name = '006-transformations';

  override up(): void {
    this.addSql('alter table endpoint add column transformation_code text null;');
    this.addSql('alter table endpoint add column filter jsonb null;');
    this.addSql('alter table event drop constraint event_status_check;');
    this.addSql(`alter table event add constraint event_status_check check (status in ('pending', 'delivered', 'retrying', 'failed', 'filtered'));`);
  }
}
