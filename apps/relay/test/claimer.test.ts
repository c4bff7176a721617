/**
 * The claimer's wake-ups around results recorded after a slot was freed: a claim that
 * came back short because an answered delivery's lease was still live must be made
 * again once that delivery is recorded, even when the record lands while the claim runs.
 */
import { describe, expect, it } from 'vitest';
import type { ClaimedDelivery } from '@hook/db';
import { Claimer, type ClaimerOptions } from '../src/delivery/claimer.ts';

function delivery(id: string): ClaimedDelivery {
  return { id, destinationId: 'dst_1' } as ClaimedDelivery;
}

/** A claimer of two slots, one a destination, with the claim and start given. */
function claimerWith(claim: ClaimerOptions['claim'], start: ClaimerOptions['start']): Claimer {
  return new Claimer({
    slots: 2,
    perDestinationLimit: 1,
    lease: () => ({ id: 'lease', ms: 60_000, destinationType: 'url' }),
    onError: (error) => {
      throw error;
    },
    claim,
    start,
  });
}

/** A promise and the function that settles it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('Claimer', () => {
  it('claims again when a result is recorded while a claim it held back runs', async () => {
    const answered = gate();
    const recorded = gate();
    const secondClaimStarted = gate();
    const secondClaimAnswer = gate();
    const claims: number[] = [];
    const started: string[] = [];
    const claimer = claimerWith(
      async (limit) => {
        claims.push(limit);
        if (claims.length === 1) return [delivery('evt_1')];
        if (claims.length === 2) {
          // evt_1's lease is still live when this claim reads the queue: it comes back short
          secondClaimStarted.open();
          await secondClaimAnswer.promise;
          return [];
        }
        return claims.length === 3 ? [delivery('evt_2')] : [];
      },
      async (claimed, free) => {
        started.push(claimed.id);
        if (claimed.id !== 'evt_1') return;
        await answered.promise;
        free(); // answered: the slot is free, the result not recorded yet
        await recorded.promise;
      },
    );
    claimer.wake();
    await expect.poll(() => started).toEqual(['evt_1']);
    answered.open(); // after the first claim is done with: its slot frees, and a second claim starts
    await secondClaimStarted.promise;
    // evt_1 is recorded while the second claim runs, which then comes back empty
    recorded.open();
    await new Promise((resolve) => setImmediate(resolve));
    secondClaimAnswer.open();
    await expect.poll(() => started, { timeout: 2_000 }).toEqual(['evt_1', 'evt_2']);
    expect(claims.length).toBeGreaterThanOrEqual(3);
    claimer.close();
  });

  it('claims again once an answered delivery is recorded, after a claim it held back came back short', async () => {
    const recorded = gate();
    const claims: number[] = [];
    const started: string[] = [];
    const claimer = claimerWith(
      async () => {
        claims.push(claims.length);
        if (claims.length === 1) return [delivery('evt_1')];
        if (claims.length === 2) return []; // held back by evt_1's lease
        return claims.length === 3 ? [delivery('evt_2')] : [];
      },
      async (claimed, free) => {
        started.push(claimed.id);
        if (claimed.id !== 'evt_1') return;
        free();
        await recorded.promise;
      },
    );
    claimer.wake();
    await expect.poll(() => claims.length).toBe(2);
    expect(started).toEqual(['evt_1']);
    recorded.open();
    await expect.poll(() => started, { timeout: 2_000 }).toEqual(['evt_1', 'evt_2']);
    claimer.close();
  });
});
