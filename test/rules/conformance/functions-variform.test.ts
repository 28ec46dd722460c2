// EMQX conformance, the functions rule SQL shares with variform: emqx_variform_bif_tests'
// regex_extract_test_, base64_encode_decode_test and null_badarg_test_ (for the functions a
// rule can call: each fails on an absent value and on JSON null). Subjects come in the payload.
import { call, fails, runFamily, type ConformanceCase } from './functions-runner.js';

const V = 'emqx_variform_bif_tests:';
const extract = (s: string, re: string, want: string[]) => call(`${V}regex_extract_test_`, 'regex_extract(payload.s, payload.re)', want, { s, re });

/** Each call with its first argument replaced by an absent value, then by JSON null. */
const NULL_BADARG = [
  'lower(X)',
  'ltrim(X)',
  'reverse(X)',
  'rtrim(X)',
  "rtrim(X, 'a')",
  "rm_prefix(X, 'a')",
  'strlen(X)',
  'substr(X, 1)',
  'substr(X, 1, 2)',
  'trim(X)',
  'upper(X)',
  "split(X, 'a')",
  "split(X, 'a', 'notrim')",
  "tokens(X, 'a')",
  "tokens(X, 'a', 'nocrlf')",
  'pad(X, 1)',
  "pad(X, 1, 'trailing')",
  "pad(X, 1, 'trailing', 'a')",
  "replace(X, 'a', 'b')",
  "replace(X, 'a', 'b', 'all')",
  "regex_match(X, 'a')",
  "regex_replace(X, 'a', 'b')",
  "regex_extract(X, 'a')",
  'ascii(X)',
  "find(X, 'a')",
  "find(X, 'a', 'trailing')",
  'unescape(X)',
];
const badarg: ConformanceCase[] = NULL_BADARG.flatMap((f) => [
  call(`${V}null_badarg_test_`, f.replace('X', 'payload.nope'), fails(), { n: null }),
  call(`${V}null_badarg_test_`, f.replace('X', 'payload.n'), fails(), { n: null }),
]);

await runFamily('functions-variform', [
  extract('Order number: 12345', '(\\d+)', ['12345']),
  extract('Hello, world!', '(\\w+).*\\s(\\w+)', ['Hello', 'world']),
  extract('No numbers here!', '(\\d+)', []),
  extract('Date: 2021-05-20', '(\\d{4})-(\\d{2})-(\\d{2})', ['2021', '05', '20']),
  extract('Hello, world!', '(Hello)', ['Hello']),
  extract('Items: 12, Price: 34', '(\\d+).*\\s(\\d+)', ['12', '34']),
  extract('Contact: john.doe@example.com', '([\\w\\.]+@[\\w\\.]+)', ['john.doe@example.com']),
  extract('Just some text, nothing more.', '([A-Z]\\d{3})', []),
  extract('User: admin, Pass: 1234', 'User: (\\w+), Pass: (\\d+)', ['admin', '1234']),
  extract('', '(\\d+)', []),
  extract('$$$###!!!', '(\\d+)', []),
  extract('Erlang 23.1 version', '(\\d+\\.\\d+)', ['23.1']),
  extract('Server IP: 192.168.1.1 at port 8080', '(\\d+\\.\\d+\\.\\d+\\.\\d+)', ['192.168.1.1']),
  call(`${V}base64_encode_decode_test`, "bin2hexstr(base64_decode(base64_encode(hexstr2bin('00FF10E29C93F09F90B8C0'))))", '00FF10E29C93F09F90B8C0'),
  ...badarg,
]);
