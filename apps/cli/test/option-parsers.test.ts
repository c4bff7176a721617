import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { collectHeader, parseDestinationId, parseHttpUrl, parseIssueId, parseIssueStatusList, parseLimit, parseLimitOrNone, parsePositiveWholeNumber, parseTimeArgument } from '../src/option-parsers.ts';

const NOW = Date.UTC(2026, 0, 31, 12, 0, 0);
const parseTime = parseTimeArgument(() => NOW);

describe('option parsers', () => {
  it('--since/--until: ISO times, dates and durations ago, as ISO UTC', () => {
    expect(parseTime('2026-01-30T08:15:00Z')).toBe('2026-01-30T08:15:00.000Z');
    expect(parseTime('2026-01-30T08:15:00+02:00')).toBe('2026-01-30T06:15:00.000Z');
    expect(parseTime('2026-01-30')).toBe('2026-01-30T00:00:00.000Z');
    expect(parseTime('2h')).toBe('2026-01-31T10:00:00.000Z');
    expect(parseTime('7d')).toBe('2026-01-24T12:00:00.000Z');
    for (const bad of ['yesterday', '2026-13-45', '12', 'now']) expect(() => parseTime(bad)).toThrow(InvalidArgumentError);
  });

  it('hook issues: --status takes issue statuses or all; an issue id is iss_ and a ULID', () => {
    expect(parseIssueStatusList('open')).toBe('open');
    expect(parseIssueStatusList('open, resolved')).toBe('open,resolved');
    expect(parseIssueStatusList('all')).toBe('open,acknowledged,resolved');
    for (const bad of ['closed', 'open,', 'failed', '', 'ALL']) expect(() => parseIssueStatusList(bad)).toThrow(InvalidArgumentError);
    expect(parseIssueId('iss_01JD2Y0Z3M4N5P6Q7R8S9TVWXY')).toBe('iss_01JD2Y0Z3M4N5P6Q7R8S9TVWXY');
    for (const bad of ['iss_1', 'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', '']) expect(() => parseIssueId(bad)).toThrow(InvalidArgumentError);
  });

  it('--limit: 1 to 100 only', () => {
    expect(parseLimit('1')).toBe(1);
    expect(parseLimit('100')).toBe(100);
    for (const bad of ['0', '101', '2.5', '-1', 'ten', '']) expect(() => parseLimit(bad)).toThrow(InvalidArgumentError);
  });

  it('--rate, --max-in-flight: whole numbers from 1; on update also none (kept as a string, commander would turn null into \'\')', () => {
    expect(parsePositiveWholeNumber('5')).toBe(5);
    expect(parseLimitOrNone('1000')).toBe(1000);
    expect(parseLimitOrNone('none')).toBe('none');
    for (const bad of ['0', '2.5', '-1', 'ten', '']) expect(() => parsePositiveWholeNumber(bad)).toThrow(InvalidArgumentError);
    for (const bad of ['0', 'null', '']) expect(() => parseLimitOrNone(bad)).toThrow(InvalidArgumentError);
    expect(() => parsePositiveWholeNumber('none')).toThrow(InvalidArgumentError);
  });

  it('destination ids: dst_ ids only', () => {
    expect(parseDestinationId('dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY')).toBe('dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY');
    for (const bad of ['ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'dst_', 'orders']) expect(() => parseDestinationId(bad)).toThrow(InvalidArgumentError);
  });

  it('-H: Name: value, repeatable, values kept as written after the first colon', () => {
    const headers = collectHeader('Stripe-Signature: t=1,v1=abc:def', collectHeader('x-a:1'));
    expect(headers).toEqual([['x-a', '1'], ['Stripe-Signature', 't=1,v1=abc:def']]);
    for (const bad of ['no colon', ': empty name', 'bad name: x']) expect(() => collectHeader(bad)).toThrow(InvalidArgumentError);
  });

  it('--destination: http and https URLs only', () => {
    expect(parseHttpUrl('https://example.com/hooks')).toBe('https://example.com/hooks');
    for (const bad of ['example.com', 'ftp://example.com', 'javascript:alert(1)']) expect(() => parseHttpUrl(bad)).toThrow(InvalidArgumentError);
  });
});
