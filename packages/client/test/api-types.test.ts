/**
 * The client's types are the core schemas' `Static`, not a copy kept in step by hand. The
 * expectTypeOf checks run in `tsc` (npm run typecheck); the value checks run here.
 */
import * as S from '@hook/core/schemas';
import type { Static } from '@hook/core/schemas';
import { Value } from 'typebox/value';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type {
  Account, AccountDetails, ApiKey, Attempt, CreatedApiKey, Delivery, Destination, DestinationTarget, Endpoint, EndpointCreate,
  EndpointUpdate, EndpointVerification, Event, EventSummary, IngestAccepted, Member, NotificationSettings, Page, Problem, SigningSecret,
} from '../src/index.ts';

describe('client API types', () => {
  it('are the Static of the resource schemas in @hook/core/schemas', () => {
    expectTypeOf<Account>().toEqualTypeOf<Static<typeof S.AccountSchema>>();
    expectTypeOf<AccountDetails>().toEqualTypeOf<Static<typeof S.AccountDetailsSchema>>();
    expectTypeOf<ApiKey>().toEqualTypeOf<Static<typeof S.ApiKeySchema>>();
    expectTypeOf<CreatedApiKey>().toEqualTypeOf<Static<typeof S.CreatedApiKeySchema>>();
    expectTypeOf<Member>().toEqualTypeOf<Static<typeof S.MemberSchema>>();
    expectTypeOf<Endpoint>().toEqualTypeOf<Static<typeof S.EndpointSchema>>();
    expectTypeOf<EndpointCreate>().toEqualTypeOf<Static<typeof S.EndpointCreateSchema>>();
    expectTypeOf<EndpointUpdate>().toEqualTypeOf<Static<typeof S.EndpointUpdateSchema>>();
    expectTypeOf<Destination>().toEqualTypeOf<Static<typeof S.DestinationSchema>>();
    expectTypeOf<EventSummary>().toEqualTypeOf<Static<typeof S.EventSummarySchema>>();
    expectTypeOf<Event>().toEqualTypeOf<Static<typeof S.EventSchema>>();
    expectTypeOf<Attempt>().toEqualTypeOf<Static<typeof S.AttemptSchema>>();
    expectTypeOf<Delivery>().toEqualTypeOf<Static<typeof S.DeliverySchema>>();
    expectTypeOf<SigningSecret>().toEqualTypeOf<Static<typeof S.SecretSchema>>();
    expectTypeOf<NotificationSettings>().toEqualTypeOf<Static<typeof S.NotificationSettingsSchema>>();
    expectTypeOf<IngestAccepted>().toEqualTypeOf<Static<typeof S.IngestAccepted>>();
    expectTypeOf<Problem>().toEqualTypeOf<Static<typeof S.Problem>>();
    expectTypeOf<Page<Endpoint>>().toEqualTypeOf<Omit<Static<ReturnType<typeof S.Page<typeof S.EndpointSchema>>>, 'data'> & { data: Endpoint[] }>();
    expectTypeOf<Page<Endpoint>['data'][number]>().toEqualTypeOf<Endpoint>();
  });

  it('say what the schemas say where Static alone would be wider', () => {
    // Destination's schema is one object with if/then (one precise error); its static type is the union it means.
    expectTypeOf<DestinationTarget>().toEqualTypeOf<
      | { type: 'cli' }
      | { type: 'url'; url: string }
      | { type: 'amqp'; url: string; exchange: string; routing_key: string }
      | { type: 'nats'; url: string; subject: string }
      | { type: 'redis'; url: string; stream: string; max_len?: number | null }
      | { type: 'mqtt'; url: string; topic: string }
    >();
    expectTypeOf<EndpointVerification['secret_set']>().toEqualTypeOf<true>();
  });

  it('values typed with them are valid under the schemas, and a schema refuses what the type refuses', () => {
    const at = '2026-01-02T03:04:05.000Z';
    const first: Destination = {
      id: 'dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', endpoint_id: 'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', position: 0,
      destination: { type: 'url', url: 'https://example.com/hook' }, status: 'active', disabled_reason: null,
      transformation: null, filter: { body: { type: 'invoice.paid' } }, rate_per_second: null, max_in_flight: 5,
      auth: { type: 'basic', username: 'hook', secret_set: true }, tls: null, signature_scheme: 'v1', public_key: null,
      ordering: { key: { header: 'x-customer' }, on_give_up: 'block' }, delay_seconds: null,
      health: { consecutive_failures: 0, failing_since: null }, created_at: at, updated_at: at,
    };
    const endpoint: Endpoint = {
      id: 'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', name: 'stripe', url: 'https://relay.example/in/x', status: 'active',
      destination: first.destination, transformation: null, filter: first.filter, destinations: [first],
      verification: { provider: 'stripe', mode: 'reject', tolerance_seconds: 300, secret_set: true, secret_hint: 'abcd' },
      response: null, handshake: null, dedupe: { header: 'x-github-delivery' }, created_at: at, updated_at: at,
    };
    expect(Value.Errors(S.EndpointSchema, endpoint)).toEqual([]);
    const { updated_at: _dropped, ...missing } = endpoint;
    expect(Value.Check(S.EndpointSchema, missing)).toBe(false);
    expect(Value.Check(S.Destination, { type: 'url' })).toBe(false);
    // Each queue type requires its own fields and its own URL scheme.
    expect(Value.Check(S.Destination, { type: 'amqp', url: 'amqp://127.0.0.1:5672', exchange: 'hook', routing_key: 'orders' })).toBe(true);
    expect(Value.Check(S.Destination, { type: 'amqp', url: 'amqp://127.0.0.1:5672', routing_key: 'orders' })).toBe(false);
    expect(Value.Check(S.Destination, { type: 'nats', url: 'https://127.0.0.1:4222', subject: 'orders' })).toBe(false);
    expect(Value.Check(S.Destination, { type: 'mqtt', url: 'mqtt://127.0.0.1:1883', topic: 'orders/#' })).toBe(false);
    expect(Value.Check(S.Destination, { type: 'cli', url: 'https://example.com' })).toBe(false);
  });
});
