import { Migration } from '@mikro-orm/migrations';

/**
 * Transformation CPU metered per account and month (docs/plans.md): the milliseconds of
 * CPU the account's transformations used, added up by each relay process, and when the
 * account first ran past its plan's per-minute allowance that month (so its
 * `transformation.throttled` notification goes out once a month).
 */
export class TransformationCpu extends Migration {
  override name = '008-transformation-cpu';

  override up(): void {
    this.addSql('alter table account_usage add column transformation_cpu_ms bigint not null default 0;');
    this.addSql('alter table account_usage add column transformation_throttled_at timestamptz null;');
  }
}
