/** The building blocks every resource schema uses: timestamps, ids, pages, problems. */
import { Type, type TSchema } from 'typebox';
import { idPattern, type IdKind } from '../ids.ts';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../pagination.ts';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC, ending in Z' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export function IdOf(kind: IdKind, description: string) {
  return Type.String({ pattern: idPattern(kind), description, examples: [`${idPattern(kind).slice(1, idPattern(kind).indexOf('_') + 1)}01JD2Y0Z3M4N5P6Q7R8S9TVWXY`] });
}

export function IdParams(kind: IdKind, description: string) {
  return Type.Object({ id: IdOf(kind, description) });
}

export const FieldErrorSchema = Type.Object({
  field: Type.String({ description: 'Where the problem is, e.g. body.name or query.limit' }),
  message: Type.String(),
});

/** RFC 9457 problem details plus Hook's code, fix and request id. */
export const Problem = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable snake_case error code; every code is listed in docs/errors.md' }),
    fix: Type.String({ description: 'How to fix it' }),
    errors: Type.Optional(Type.Array(FieldErrorSchema, { description: 'One entry per invalid field, for validation_failed' })),
    request_id: Type.String(),
  },
  { description: 'application/problem+json (RFC 9457)' },
);

/** One page of a list route: pass `next_cursor` back as `cursor` for the next; null on the last page. */
export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next page; null on the last page' }),
  });
}

/** `?limit=&cursor=` of every list route. */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};
export const PageQuerySchema = Type.Object(PageQuery);

/** A name for a key or an endpoint: not empty, not only spaces. */
export const ResourceName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: '1 to 200 characters, not only spaces' });

/** A URL that receives signed POSTs (endpoint destinations, the notification URL). */
export const DestinationUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'An http or https URL that receives signed POSTs' });
