/**
 * DDL that takes a lock ingest would queue behind, run so that it never holds ingest up
 * for long (migrations 019 and 020).
 *
 * LOCK_TIMEOUT: how long each lock is waited for before the block gives up and tries again.
 * Ingest queues behind a lock request, so this bounds what one try can hold it up; and it
 * is below PostgreSQL's default deadlock_timeout (1 s): a statement of the previous
 * release that holds `delivery` or `attempt` and waits for `event` (a prepared statement
 * locks its tables in its plan's order) is then never the one a deadlock check cancels:
 * this migration gives up first (measured with npm run bench:upgrade: with a 1 s timeout
 * equal to deadlock_timeout, ingest statements failed with 'deadlock detected').
 */
export const LOCK_TIMEOUT = '200ms';

/**
 * `statements` as one DO block (one transaction) whose locks are each waited for at most
 * LOCK_TIMEOUT, retried from the start (up to 60 times, 0.2 s apart) when one is not
 * granted in time or a deadlock is detected.
 */
export function withShortLocks(statements: string): string {
  return `
    do $short$
    declare
      tries int := 0;
    begin
      loop
        begin
          set local lock_timeout = '${LOCK_TIMEOUT}';
          ${statements.trim().replace(/;?$/, ';')}
          exit;
        exception when lock_not_available or deadlock_detected then
          tries := tries + 1;
          if tries >= 60 then raise; end if;
          perform pg_sleep(0.2);
        end;
      end loop;
    end
    $short$;`;
}
