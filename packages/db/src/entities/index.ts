import { Account } from './account.ts';
import { ApiKey } from './api-key.ts';
import { Attempt } from './attempt.ts';
import { Endpoint } from './endpoint.ts';
import { Delivery } from './delivery.ts';
import { Destination } from './destination.ts';
import { Event } from './event.ts';
import { Member } from './member.ts';
import { PlanChange } from './plan-change.ts';

export { Account, type AccountEntity } from './account.ts';
export { ApiKey, type ApiKeyEntity } from './api-key.ts';
export { Endpoint, type EndpointEntity } from './endpoint.ts';
export { Event, type EventEntity } from './event.ts';
export { Destination, type DestinationEntity, type StoredAuth, type StoredTls } from './destination.ts';
export { Delivery, type DeliveryEntity } from './delivery.ts';
export { Attempt, type AttemptEntity } from './attempt.ts';
export { PlanChange, type PlanChangeEntity } from './plan-change.ts';
export { Member, type MemberEntity, type MemberRole } from './member.ts';

export const ENTITIES = [Account, ApiKey, Endpoint, Destination, Event, Delivery, Attempt, PlanChange, Member];
