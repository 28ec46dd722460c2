// Try it: a rule's SQL (or a running rule by its id) and a sample event → the rule's outputs and,
// for a running rule, what each action would write, rendered as its sink would, without writing.
// The same engine as `weir eval`; an error in the SQL is shown at its line and column.
import { useState } from 'preact/hooks';
import type { TryEvent, TryRequest, TryResult } from '../../../src/core/app/console/api.js';
import { useAccess } from '../access.js';
import { messageOf, postJson } from '../api.js';
import { json } from '../format.js';
import { parseProperties } from '../user-properties.js';
import { RuleSelect, useRuleChoice } from '../rule-choice.js';
import { AccessNote, Problem, Section } from '../ui.js';

const SAMPLE_SQL = `SELECT
  payload.temp AS temp,
  clientid
FROM "device/+/telemetry"
WHERE payload.temp > 20`;

export function TryView() {
  const access = useAccess();
  const allowed = access?.payloads === true;
  const rules = useRuleChoice(allowed);
  const [mode, setMode] = useState<'sql' | 'rule'>('sql');
  const [sql, setSql] = useState(SAMPLE_SQL);
  const [topic, setTopic] = useState('device/d1/telemetry');
  const [payload, setPayload] = useState('{"temp": 21.5, "hum": 40}');
  const [encoding, setEncoding] = useState<'text' | 'base64'>('text');
  const [qos, setQos] = useState<0 | 1 | 2>(1);
  const [clientid, setClientid] = useState('d1');
  const [username, setUsername] = useState('');
  const [props, setProps] = useState('');
  const [result, setResult] = useState<{ request: TryRequest; answer: TryResult } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  if (!access) return <p class="muted">Loading…</p>;
  if (!allowed) return <AccessNote access={access} need="payloads" what="Try it is" />;
  const chosenRule = rules.chosen;

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    let request: TryRequest;
    try {
      const event: TryEvent = {
        topic,
        payload,
        payload_encoding: encoding,
        qos,
        ...(clientid ? { clientid } : {}),
        ...(username ? { username } : {}),
        ...(props.trim() ? { user_properties: parseProperties(props) } : {}),
      };
      request = mode === 'sql' ? { sql, event } : { rule: chosenRule, event };
    } catch (err) {
      setError(messageOf(err));
      return;
    }
    setBusy(true);
    try {
      setResult({ request, answer: await postJson<TryResult>('try', request) });
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="view" data-view="try">
      <Section title="Try a rule on a sample message">
        <form class="form" onSubmit={submit}>
          <fieldset class="row">
            <label>
              <input type="radio" name="mode" checked={mode === 'sql'} onChange={() => setMode('sql')} /> SQL
            </label>
            <label>
              <input type="radio" name="mode" checked={mode === 'rule'} onChange={() => setMode('rule')} /> a running rule
            </label>
          </fieldset>
          {mode === 'sql' ? (
            <label class="field">
              SQL
              <textarea name="sql" rows={7} spellcheck={false} class="mono" value={sql} onInput={(e) => setSql(e.currentTarget.value)} />
            </label>
          ) : (
            <RuleSelect choice={rules} />
          )}
          <label class="field">
            topic
            <input name="topic" class="mono" value={topic} onInput={(e) => setTopic(e.currentTarget.value)} />
          </label>
          <label class="field">
            payload
            <textarea name="payload" rows={4} spellcheck={false} class="mono" value={payload} onInput={(e) => setPayload(e.currentTarget.value)} />
          </label>
          <div class="row">
            <label class="field">
              payload is
              <select name="encoding" value={encoding} onChange={(e) => setEncoding(e.currentTarget.value as 'text' | 'base64')}>
                <option value="text">text</option>
                <option value="base64">base64</option>
              </select>
            </label>
            <label class="field">
              QoS
              <select name="qos" value={String(qos)} onChange={(e) => setQos(Number(e.currentTarget.value) as 0 | 1 | 2)}>
                <option value="0">0</option>
                <option value="1">1</option>
                <option value="2">2</option>
              </select>
            </label>
            <label class="field">
              client id
              <input name="clientid" class="mono" value={clientid} onInput={(e) => setClientid(e.currentTarget.value)} />
            </label>
            <label class="field">
              username
              <input name="username" class="mono" value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
            </label>
          </div>
          <label class="field">
            user properties (name=value, one a line)
            <textarea name="properties" rows={2} spellcheck={false} class="mono" value={props} onInput={(e) => setProps(e.currentTarget.value)} />
          </label>
          <div class="row">
            <button type="submit" disabled={busy || (mode === 'rule' && !chosenRule)}>
              {busy ? 'Evaluating…' : 'Evaluate'}
            </button>
            <span class="muted small">Nothing is written: the outputs and writes are shown only.</span>
          </div>
        </form>
        <Problem error={error} />
      </Section>
      {result ? <TryAnswer request={result.request} answer={result.answer} /> : null}
    </div>
  );
}

function TryAnswer({ request, answer }: { request: TryRequest; answer: TryResult }) {
  const e = answer.error;
  const lines = (request.sql ?? '').split('\n');
  const at = e?.line !== undefined ? lines[e.line - 1] : undefined;
  return (
    <Section title="Result" right={<span class="muted small">{answer.elapsed_ms.toFixed(2)} ms</span>}>
      <div data-try="result">
        {e ? (
          <div class="problem" data-try="error">
            {e.line !== undefined ? (
              <b data-try="position">
                line {e.line}
                {e.column !== undefined ? `, column ${e.column}` : ''}:{' '}
              </b>
            ) : null}
            {e.message}
            {at !== undefined ? (
              <pre class="code caret">
                {at}
                {'\n'}
                {`${' '.repeat(Math.max(0, (e.column ?? 1) - 1))}^`}
              </pre>
            ) : null}
          </div>
        ) : (
          <p data-try="matched">{answer.matched ? `matched: ${answer.outputs.length} output${answer.outputs.length === 1 ? '' : 's'}` : 'not matched'}</p>
        )}
        {!e ? (
          <pre class="code" data-try="outputs">
            {json(answer.outputs)}
          </pre>
        ) : null}
        {answer.actions.map((a, i) => (
          <div key={i} class="try-action" data-action={a.sink}>
            <h3 class="mono">
              → {a.sink} <span class="muted">({a.type})</span>
            </h3>
            {a.error ? <p class="problem small">{a.error}</p> : null}
            <pre class="code" data-try="writes">
              {json(a.writes)}
            </pre>
          </div>
        ))}
      </div>
    </Section>
  );
}
