// docs/rule-functions.md carries the table generated from the function registry: fail when stale.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { functionReference } from '../../src/rules/functions/reference.js';

test('docs/rule-functions.md is generated from the registry', () => {
  const doc = readFileSync(new URL('../../docs/rule-functions.md', import.meta.url), 'utf8');
  const start = doc.indexOf('<!-- generated:functions -->\n');
  const end = doc.indexOf('<!-- /generated:functions -->');
  assert.ok(start >= 0 && end > start, 'markers missing');
  const current = doc.slice(start + '<!-- generated:functions -->\n'.length, end);
  assert.equal(current, functionReference(), 'docs/rule-functions.md is stale: regenerate it (see the command at its top)');
});
