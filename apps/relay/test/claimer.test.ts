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
function claimerWith(claim: ClaimerOptions['claim'], start: ClaimerOptions['start'], options: Partial<ClaimerOptions> = {}): Claimer {
  return new Claimer({
    slots: 2,
    perDestinationLimit: 1,
    ...options,
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

  describe('a delivery waiting for a transformation thread', () => {
    /** A claimer whose first claim finds nothing (no backlog: ingest may reserve), evt_1 reserved and started, waiting for its thread. */
    async function waitingClaimer(options: Partial<ClaimerOptions> = {}) {
      const threadDone = gate();
      const answered = gate();
      const waits: boolean[] = [];
      let claims = 0;
      const claimer = claimerWith(
        async () => {
          claims += 1;
          return [];
        },
        async (claimed, free, wait) => {
          if (claimed.id !== 'evt_1') return;
          wait(true);
          waits.push(true);
          await threadDone.promise;
          wait(false);
          waits.push(false);
          await answered.promise;
          free();
        },
        options,
      );
      claimer.wake();
      await expect.poll(() => claims).toBe(1);
      const slot = claimer.reserve('dst_1', 'evt_1');
      expect(slot).not.toBeNull();
      slot!.deliver(delivery('evt_1'));
      expect(waits).toEqual([true]);
      return { claimer, threadDone, answered, waits };
    }

    it('lends its slot to ingest while it waits, and takes it back when the wait is over', async () => {
      const { claimer, threadDone, answered, waits } = await waitingClaimer();
      // The destination's one slot is lent: a new event still gets one.
      const second = claimer.reserve('dst_1', 'evt_2');
      expect(second).not.toBeNull();
      second!.cancel();
      threadDone.open();
      await expect.poll(() => waits).toEqual([true, false]);
      // Back on its slot (the destination's share) while it is sent.
      expect(claimer.reserve('dst_1', 'evt_3')).toBeNull();
      answered.open();
      await claimer.stop();
    });

    it('keeps its slot when every wait slot is taken', async () => {
      const { claimer, threadDone, answered } = await waitingClaimer({ waitSlots: 0 });
      expect(claimer.reserve('dst_1', 'evt_2')).toBeNull();
      threadDone.open();
      answered.open();
      await claimer.stop();
    });

    it('still counts in its destination share after a claim: one that came back short leaves the backlog, so new events do not overtake it', async () => {
      const threadDone = gate();
      let claims = 0;
      const claimer = claimerWith(
        async () => {
          claims += 1;
          // Short: evt_1's lease fills its destination's capacity in the claim statement.
          return claims === 1 ? [delivery('evt_1')] : [];
        },
        async (claimed, free, wait) => {
          wait(true);
          await threadDone.promise;
          wait(false);
          free();
        },
      );
      claimer.wake();
      // The lent slot may claim once more (nothing): the backlog stays either way.
      await expect.poll(() => claims).toBeGreaterThanOrEqual(1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(claimer.reserve('dst_1', 'evt_2')).toBeNull();
      threadDone.open();
      await claimer.stop();
    });

    it('holds at most slots + waitSlots deliveries', async () => {
      const { claimer, threadDone, answered } = await waitingClaimer({ slots: 1, perDestinationLimit: 1, waitSlots: 1 });
      // evt_1 waits on the one wait slot, its slot lent to evt_2: no third.
      const second = claimer.reserve('dst_1', 'evt_2');
      expect(second).not.toBeNull();
      expect(claimer.reserve('dst_1', 'evt_3')).toBeNull();
      second!.cancel();
      threadDone.open();
      answered.open();
      await claimer.stop();
    });
  });
});
