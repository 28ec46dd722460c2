// The decisions every member draws from the same view (src/core/fleet/member.ts): whether a leaving
// replica is the last, and who adopts an orphan.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { adopterOf, drainConfirmed, leaveDecision, type MemberRecord, type MemberState, orphans, parseRecord } from '../../src/core/fleet/member.js';

function rec(client_id: string, state: MemberState, adopting?: string[]): MemberRecord {
  return { state, client_id, sessions: [`${client_id}-0`], connections: 1, incarnation: 'i', pid: 1, host: 'h', version: 'v', time: 't', adopting };
}
const view = (...rs: MemberRecord[]) => new Map(rs.map((r) => [r.client_id, r]));

test('a leaving replica drains when another member is live, and keeps its sessions when it is the last', () => {
  assert.deepEqual(leaveDecision(view(rec('a', 'leaving'), rec('b', 'live')), 'a'), { decision: 'drain', others: ['b'] });
  // b left before a's echo came back: a is the last one processed.
  assert.deepEqual(leaveDecision(view(rec('a', 'leaving'), rec('b', 'leaving')), 'a'), { decision: 'keep', others: [] });
  assert.deepEqual(leaveDecision(view(rec('a', 'leaving'), rec('b', 'gone'), rec('c', 'stopped')), 'a'), { decision: 'keep', others: [] });
  assert.deepEqual(leaveDecision(view(rec('a', 'leaving')), 'a'), { decision: 'keep', others: [] });
});

test('orphans are the gone and the stopped; the adopter is the lowest live client id, or whoever adopts already', () => {
  const v = view(rec('c', 'live'), rec('b', 'live'), rec('a', 'leaving'), rec('x', 'gone'), rec('y', 'stopped'));
  assert.deepEqual(
    orphans(v).map((r) => r.client_id),
    ['x', 'y'],
  );
  assert.equal(adopterOf(v, 'x'), 'b', 'a is leaving: b is the lowest live');
  assert.equal(adopterOf(view(rec('b', 'live'), rec('c', 'live', ['x']), rec('x', 'gone')), 'x'), 'c', 'c said it adopts x');
  assert.equal(adopterOf(view(rec('x', 'gone')), 'x'), undefined, 'nobody live');
});

test('a record from the broker: cleared or foreign payloads are no member', () => {
  assert.equal(parseRecord(Buffer.alloc(0)), undefined);
  assert.equal(parseRecord(Buffer.from('not json')), undefined);
  assert.equal(parseRecord(Buffer.from('{"state":"dancing","client_id":"a"}')), undefined);
  assert.equal(parseRecord(Buffer.from(JSON.stringify(rec('a', 'gone'))))?.state, 'gone');
});

test('a tentative drain is confirmed only while another member takes the share: live, keeping, or stopped', () => {
  const leaving = (id: string, decision?: 'drain' | 'keep') => ({ ...rec(id, 'leaving'), decision });
  assert.deepEqual(drainConfirmed(view(leaving('a', 'drain'), rec('b', 'live')), 'a'), { confirmed: true, holders: ['b'] });
  assert.deepEqual(drainConfirmed(view(leaving('a', 'drain'), leaving('b', 'keep')), 'a'), { confirmed: true, holders: ['b'] });
  assert.deepEqual(drainConfirmed(view(leaving('a', 'drain'), rec('b', 'stopped')), 'a'), { confirmed: true, holders: ['b'] });
  // Both saw the other live at their echo (a broker delivering out of order): neither may drain.
  assert.deepEqual(drainConfirmed(view(leaving('a', 'drain'), leaving('b', 'drain')), 'a'), { confirmed: false, holders: [] });
  assert.deepEqual(drainConfirmed(view(leaving('a', 'drain'), leaving('b'), rec('c', 'gone')), 'a'), { confirmed: false, holders: [] });
});
