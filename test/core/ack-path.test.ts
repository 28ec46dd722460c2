import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Socket } from 'node:net';
import { AckWindow } from '../../src/core/ingest/ack-path.js';

/** PUBACKs go out at the end of the synchronous run that settled them. */
const tick = () => new Promise<void>((r) => queueMicrotask(r));

/** Records the bytes AckWindow writes; a stand-in for the socket only, the codec is the real one. */
function recordingSocket(): { socket: Socket; acks: () => number[] } {
  const chunks: Buffer[] = [];
  const socket = { write: (b: Buffer) => chunks.push(Buffer.from(b)) } as unknown as Socket;
  return {
    socket,
    acks() {
      const all = Buffer.concat(chunks);
      const ids: number[] = [];
      for (let i = 0; i < all.length; i += 4) {
        assert.equal(all[i], 0x40, 'PUBACK fixed header');
        assert.equal(all[i + 1], 2, 'remaining length 2');
        ids.push(all.readUInt16BE(i + 2));
      }
      return ids;
    },
  };
}

test('PUBACKs leave in arrival order whatever order messages settle in', async () => {
  const { socket, acks } = recordingSocket();
  let acked = 0;
  const w = new AckWindow(100, socket, (n) => (acked += n));
  const slots = [7, 3, 65535, 1, 9].map((id) => w.push(id, 1));
  w.settle(slots[2]!);
  w.settle(slots[4]!);
  await tick();
  assert.deepEqual(acks(), [], 'nothing before the first is settled');
  w.settle(slots[0]!);
  await tick();
  assert.deepEqual(acks(), [7]);
  w.settle(slots[1]!);
  await tick();
  assert.deepEqual(acks(), [7, 3, 65535]);
  w.settle(slots[3]!);
  await tick();
  assert.deepEqual(acks(), [7, 3, 65535, 1, 9]);
  assert.equal(acked, 5);
  assert.equal(w.size, 0);
});

test('settling twice acks once; an abandoned window acks nothing more', async () => {
  const { socket, acks } = recordingSocket();
  const w = new AckWindow(10, socket, () => {});
  const a = w.push(1, 1);
  const b = w.push(2, 1);
  w.settle(a);
  w.settle(a);
  await tick();
  assert.deepEqual(acks(), [1]);
  assert.equal(w.abandon(), 1);
  w.settle(b);
  await tick();
  assert.deepEqual(acks(), [1]);
});

test('full at max, room again only below half (hysteresis)', async () => {
  const { socket } = recordingSocket();
  const w = new AckWindow(4, socket, () => {});
  const s = [1, 2, 3, 4].map((i) => w.push(i, 1));
  assert.equal(w.full, true);
  w.settle(s[0]!);
  await tick();
  assert.equal(w.full, false);
  assert.equal(w.hasRoom, false);
  w.settle(s[1]!);
  await tick();
  assert.equal(w.hasRoom, true);
});

test('messages held without an ack (QoS 0, ack: on_receive) count against max until released', () => {
  const { socket } = recordingSocket();
  let rooms = 0;
  const w = new AckWindow(
    4,
    socket,
    () => {},
    () => rooms++,
  );
  w.push(1, 1);
  const releases = [w.hold(), w.hold(), w.hold()];
  assert.equal(w.size, 1, 'held messages are not unacked ones');
  assert.equal(w.held, 4);
  assert.equal(w.full, true);
  releases[0]!.release();
  releases[0]!.release();
  assert.equal(w.held, 3, 'a release counts once');
  assert.equal(rooms, 0, 'no room above half');
  releases[1]!.release();
  assert.equal(w.hasRoom, true);
  assert.equal(rooms, 1);
});

test('a long run compacts without losing order, in one write per run of settles', async () => {
  const { socket, acks } = recordingSocket();
  const w = new AckWindow(100_000, socket, () => {});
  const slots = Array.from({ length: 20_000 }, (_, i) => w.push((i % 65535) + 1, 1));
  for (let i = slots.length - 1; i >= 0; i--) if (i % 2) w.settle(slots[i]!);
  for (let i = 0; i < slots.length; i += 2) w.settle(slots[i]!);
  await tick();
  const ids = acks();
  assert.equal(ids.length, 20_000);
  assert.deepEqual(ids.slice(0, 3), [1, 2, 3]);
  assert.equal(ids[19_999], (19_999 % 65535) + 1);
});

test('acks taken at receipt (ack: on_receive) count once, as held, while their PUBACKs wait for the end of the run', async () => {
  const { socket, acks } = recordingSocket();
  const w = new AckWindow(200, socket, () => {});
  // One socket chunk: every message of it is acked and held in the same synchronous run.
  let read = 0;
  while (!w.full) {
    w.ackNow(read + 1, 1);
    w.hold();
    read++;
  }
  assert.equal(read, 200, 'the bound is reached at max_unacked messages, not half of it');
  assert.equal(w.size, 0, 'nothing is waiting for an ack');
  await tick();
  assert.deepEqual(
    acks(),
    Array.from({ length: 200 }, (_, i) => i + 1),
    'all acked, in order, in one write',
  );
});

test('an ack taken at receipt behind an open slot waits for it', async () => {
  const { socket, acks } = recordingSocket();
  const w = new AckWindow(10, socket, () => {});
  w.ackNow(1, 1);
  const open = w.push(2, 1);
  w.ackNow(3, 1);
  await tick();
  assert.deepEqual(acks(), [1]);
  w.settle(open);
  await tick();
  assert.deepEqual(acks(), [1, 2, 3]);
});

test('abandoning the connection counts acks taken at receipt that were not written yet', async () => {
  const { socket, acks } = recordingSocket();
  const w = new AckWindow(10, socket, () => {});
  w.ackNow(7, 1);
  w.ackNow(8, 1);
  assert.equal(w.abandon(), 2, 'both were pending');
  await tick();
  assert.deepEqual(acks(), [], 'nothing is written on a dead connection');
});

test('an admitted message is acked only when the last hold of its settlement is released, once', async () => {
  const { socket, acks } = recordingSocket();
  const w = new AckWindow(10, socket, () => {});
  const s = w.admit(1, 5, false);
  s.hold(); // an action output on its way
  s.hold(); // a dead letter on its way
  s.release(); // the pipeline has handed the message on
  await tick();
  assert.deepEqual(acks(), []);
  s.release();
  await tick();
  assert.deepEqual(acks(), [], 'one hold is left');
  s.release();
  s.release();
  await tick();
  assert.deepEqual(acks(), [5], 'acked once');
  const held = w.admit(0, undefined, false);
  assert.equal(w.held, 1, 'a QoS 0 message holds a place');
  held.release();
  assert.equal(w.held, 0, 'and gives it back when settled');
});

test("the oldest unacked message's wait: from the first slot not yet acked, 0 when none", async () => {
  const { socket, acks } = recordingSocket();
  const w = new AckWindow(10, socket, () => {});
  const t0 = Date.now();
  assert.equal(w.oldestUnackedAge(t0), 0, 'nothing held');
  const first = w.admit(1, 1, false, t0);
  const second = w.admit(1, 2, false, t0 + 3_000);
  w.admit(0, undefined, false, t0 + 4_000); // QoS 0: held, but no PUBACK waits for it
  assert.ok(Math.abs(w.oldestUnackedAge(t0 + 10_000) - 10) <= 0.1, `${w.oldestUnackedAge(t0 + 10_000)}`);
  second.release(); // settled out of order: the first still waits, and so does its PUBACK
  await tick();
  assert.ok(Math.abs(w.oldestUnackedAge(t0 + 10_000) - 10) <= 0.1);
  first.release();
  await tick();
  assert.deepEqual(acks(), [1, 2]);
  assert.equal(w.oldestUnackedAge(t0 + 10_000), 0, 'both acked');
  assert.equal(w.held, 1, 'the QoS 0 message is still held');
});
