import { describe, expect, it } from 'vitest';
import { WakeableSleep } from '../../src/core/wakeable-sleep';

const timed = async (p: Promise<void>) => {
  const t0 = performance.now();
  await p;
  return performance.now() - t0;
};

describe('WakeableSleep', () => {
  it('sleeps its time when nobody wakes it', async () => {
    expect(await timed(new WakeableSleep().sleep(60))).toBeGreaterThanOrEqual(55);
  });

  it('ends at once when woken', async () => {
    const alarm = new WakeableSleep();
    const sleeping = alarm.sleep(10_000);
    setTimeout(() => alarm.wake(), 10);
    expect(await timed(sleeping)).toBeLessThan(1_000);
  });

  it('forgets a wake while awake unless latched; a latched one ends the next sleep, reset forgets it', async () => {
    const plain = new WakeableSleep();
    plain.wake();
    expect(await timed(plain.sleep(60))).toBeGreaterThanOrEqual(55);

    const latched = new WakeableSleep(true);
    latched.wake();
    expect(await timed(latched.sleep(10_000))).toBeLessThan(50);
    // Used once: the following sleep runs its time.
    expect(await timed(latched.sleep(60))).toBeGreaterThanOrEqual(55);
    latched.wake();
    latched.reset();
    expect(await timed(latched.sleep(60))).toBeGreaterThanOrEqual(55);
  });
});
