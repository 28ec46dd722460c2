// The function reference in docs/rule-functions.md, generated from the registry so that the docs
// cannot drift from the code (test/rules/docs.test.ts fails when the file is stale).
import { FUNCTIONS } from './all.js';
import type { Family, FunctionSpec } from './registry.js';
import { UNSUPPORTED } from './unsupported.js';

/** Where weir knowingly differs from EMQX for a supported function, and why. */
export const DIFFERENCES: Readonly<Record<string, string>> = {
  abs: 'EMQX accepts integers only; weir also takes floats.',
  strlen: 'Counts code points; EMQX counts grapheme clusters (differs for combining marks and emoji sequences).',
  substr: 'Code points, 0-based start (as EMQX behaves; some EMQX docs say 1-based).',
  reverse: 'Reverses code points, not grapheme clusters.',
  sprintf:
    'A subset of io_lib:format: ~s ~p ~w ~B ~b ~f ~e ~g ~c ~x ~X ~n ~i ~~ with width, precision and the t and l modifiers (~ts); ~p prints strings without <<"">>.',
  subbits:
    "A 'bits' result that is not whole bytes is a bitstring: bitsize, subbits and bin2hexstr see its exact size, other functions its bytes padded with zero bits.",
  now_timestamp: "'nanosecond' epochs exceed 2^53 and lose precision as JS numbers; 'microsecond' too after 2255.",
  format_date: "'local' is the offset of the host weir runs on, as in EMQX.",
  regex_match:
    "RE2 (linear time) instead of PCRE: the same syntax without backreferences, lookaround, atomic groups or possessive quantifiers, refused with rule.bad_regex (at compile time for a literal pattern); \\d \\w \\s \\b are ASCII, as PCRE's default. docs/rules.md, 'Regular expressions'.",
  regex_replace: 'See regex_match; & and \\N in the replacement as in Erlang re:replace.',
  regex_extract: 'See regex_match.',
  json_encode: 'Keys keep their insertion order (EMQX sorts small maps).',
  jsonata: 'Not in EMQX: JSONata beside jq(). A string argument is decoded as JSON first, as jq() does.',
  jq: "jq 1.7 in WebAssembly (jq-web): each call runs jq's main(), about 1.3 ms (788 projections/s in npm run bench -- rules); EMQX caches the compiled filter. Integers beyond 2^53 lose precision. The timeout is at most what is left of the 1 s evaluation budget (EMQX: 10 s by default), since the process waits while jq runs; it fails with rule.limit.",
  schema_decode:
    "Protobuf 64-bit integers beyond 2^53 − 1 come as their decimal digits (EMQX: exact integers); map fields' integer keys as text. docs/rules.md, 'Binary payloads'.",
  sparkplug_decode: "EMQX's sparkplug_decode leaves bytes_value as raw bytes; weir's behaves as spb_decode (base64), the specification's reading.",
  sparkplug_encode: "EMQX's sparkplug_encode takes bytes_value raw; weir's behaves as spb_encode (base64).",
  spb_decode: "Aliases are resolved from the births this weir process saw; with replicas in one share group see docs/rules.md, 'Sparkplug B'.",
  float: "float(x, n) rounds half away from zero like toFixed, not Erlang's float_to_list.",
};

const FAMILY_TITLES: Record<Family, string> = {
  message: 'Message accessors',
  math: 'Math',
  type: 'Type tests and conversion',
  string: 'Strings',
  map: 'Maps',
  array: 'Arrays',
  hash: 'Hashing',
  encode: 'Encoding (base64, hex)',
  json: 'JSON',
  bits: 'Bits and subbits',
  compress: 'Compression',
  time: 'Date and time',
  misc: 'UUID, coalesce and others',
  jq: 'jq',
  jsonata: 'JSONata',
  schema: 'Schemas (Protobuf, Avro, JSON Schema) and Sparkplug B',
};

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The generated part of docs/rule-functions.md. */
export function functionReference(): string {
  const lines: string[] = [];
  const byFamily = new Map<Family, FunctionSpec[]>();
  for (const f of FUNCTIONS.all()) {
    const list = byFamily.get(f.family) ?? [];
    list.push(f);
    byFamily.set(f.family, list);
  }
  for (const [family, specs] of byFamily) {
    lines.push(`### ${FAMILY_TITLES[family]}`, '', '| Function | What it does | Example | Differs from EMQX |', '| --- | --- | --- | --- |');
    for (const f of specs.sort((a, b) => a.name.localeCompare(b.name))) {
      const ex = f.examples.find((e) => e.result !== undefined || e.type !== undefined);
      const example = ex ? `\`${cell(ex.call)}\` → ${ex.type ? `*${ex.type}*` : `\`${cell(JSON.stringify(ex.result))}\``}` : '';
      lines.push(`| \`${cell(f.signature)}\` | ${cell(f.summary)}${f.async ? ' **Asynchronous.**' : ''} | ${example} | ${cell(DIFFERENCES[f.name] ?? '')} |`);
    }
    lines.push('');
  }
  lines.push('### Not supported', '', '| EMQX function | Why not |', '| --- | --- |');
  for (const [name, why] of Object.entries(UNSUPPORTED).sort()) lines.push(`| \`${name}\` | ${cell(why)} |`);
  lines.push('');
  return lines.join('\n');
}
