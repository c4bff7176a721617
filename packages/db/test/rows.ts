/** Rows the db tests write directly: an endpoint and its destinations, as the relay stores them. */
import { newId } from '@hook/core';

export type Sql = (text: string, params?: unknown[]) => Promise<any[]>;

export interface DestinationRow {
  type?: 'url' | 'cli';
  url?: string | null;
  secret?: string;
  previousSecret?: string | null;
  status?: 'active' | 'paused' | 'disabled';
  maxInFlight?: number | null;
}

/** Inserts an active endpoint with the given destinations (one URL destination by default); returns the ids. */
export async function insertEndpoint(sql: Sql, accountId: string, destinations: DestinationRow[] = [{}], options: { id?: string; status?: string } = {}): Promise<{ endpointId: string; destinationIds: string[] }> {
  const endpointId = options.id ?? newId('endpoint');
  await sql(
    `insert into endpoint (id, account_id, name, ingest_id, status, created_at, updated_at) values (?, ?, 'e', ?, ?, now(), now())`,
    [endpointId, accountId, `ingest-${endpointId}`, options.status ?? 'active'],
  );
  const destinationIds: string[] = [];
  for (const [position, destination] of destinations.entries()) {
    const id = position === 0 ? `dst_${endpointId.slice(3)}` : newId('destination');
    const type = destination.type ?? 'url';
    await sql(
      `insert into destination (id, account_id, endpoint_id, position, type, url, secret, previous_secret, previous_secret_expires_at, status, max_in_flight, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now())`,
      [id, accountId, endpointId, position, type, type === 'url' ? (destination.url ?? 'http://127.0.0.1:9/x') : null, destination.secret ?? 'whsec_AAAA',
        destination.previousSecret ?? null, destination.previousSecret ? new Date(Date.now() + 3_600_000) : null, destination.status ?? 'active', destination.maxInFlight ?? null],
    );
    destinationIds.push(id);
  }
  return { endpointId, destinationIds };
}
