import { Migration } from '@mikro-orm/migrations';

/**
 * An account may give an email at signup, and every plan change is kept: one row per
 * change, read newest first per account (the index), never updated or deleted.
 */
export class PlanHistory extends Migration {
  override name = '003-plan-history';

  override up(): void {
    this.addSql('alter table account add column email text null;');
    this.addSql(`
      create table plan_change (
        id text primary key,
        account_id text not null references account (id) on delete cascade deferrable initially deferred,
        from_plan text not null,
        to_plan text not null,
        changed_at timestamptz not null
      );`);
    this.addSql('create index plan_change_account_idx on plan_change (account_id, id);');
  }
}
