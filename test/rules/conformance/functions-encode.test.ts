// EMQX conformance, encodings, hashes, compression and bits: emqx_rule_funcs_SUITE's
// t_hexstr2bin … t_hex_convert, t_hash_funcs … t_base64_*, t_bits_op, t_bitsize … t_subbits_*.
// Property tests are restated on fixed inputs (bytes FB FF 00 01: every base64 alphabet edge);
// binaries are built with hexstr2bin, and bitstrings (<<1:4, 2>>) with subbits(…, 'bits').
import { call, fails, runFamily } from './functions-runner.js';

const S = 'emqx_rule_funcs_SUITE:';
/** <<V:N, Rest/binary>> from EMQX's tests, as `subbits` of the padded hex: `bits(1, 4, '02')`. */
const bits = (v: number, n: number, rest: string): string => {
  const pad = Math.ceil(n / 8) * 8;
  return `subbits(hexstr2bin('${v.toString(16).padStart(pad / 4, '0')}${rest}'), ${pad - n + 1}, ${n + rest.length * 4}, 'bits')`;
};

await runFamily('functions-encode', [
  call(`${S}t_hexstr2bin`, "bin2hexstr(hexstr2bin('6364f'))", '06364F'),
  call(`${S}t_hexstr2bin`, "bin2hexstr(hexstr2bin('a'))", '0A'),
  call(`${S}t_hexstr2bin`, "bin2hexstr(hexstr2bin('0102'))", '0102'),
  call(`${S}t_hexstr2bin`, "bin2hexstr(hexstr2bin('1121'))", '1121'),
  call(`${S}t_hexstr2bin_with_prefix`, "bin2hexstr(hexstr2bin('0x6364f', '0x'))", '06364F'),
  call(`${S}t_hexstr2bin_with_prefix`, "bin2hexstr(hexstr2bin('0Xa', '0X'))", '0A'),
  call(`${S}t_hexstr2bin_with_prefix`, "bin2hexstr(hexstr2bin('0bf', '0b'))", '0F'),
  call(`${S}t_hexstr2bin_with_prefix`, "bin2hexstr(hexstr2bin('0B5', '0B'))", '05'),
  call(`${S}t_hexstr2bin_with_invalid_prefix`, "hexstr2bin('0x6364f', 'ab')", fails('prefix')),
  call(`${S}t_hexstr2bin_with_invalid_prefix`, "hexstr2bin('0Xa', 'ef')", fails('prefix')),
  call(`${S}t_hexstr2bin_with_invalid_prefix`, "hexstr2bin('0bf', payload.p)", fails('prefix'), { p: '你好👋' }),
  call(`${S}t_bin2hexstr`, "bin2hexstr(hexstr2bin('0102'))", '0102'),
  call(`${S}t_bin2hexstr_with_prefix`, "bin2hexstr(hexstr2bin('0102'), '0x')", '0x0102'),
  call(`${S}t_bin2hexstr_with_prefix`, "bin2hexstr(hexstr2bin('1121'), '0B')", '0B1121'),
  call(`${S}t_bin2hexstr_with_prefix`, "bin2hexstr(hexstr2bin('0102'), payload.p)", '🧠0102', { p: '🧠' }),
  call(`${S}t_bin2hexstr_not_even_bytes`, `bin2hexstr(${bits(1, 5, '02')})`, '0102'),
  call(`${S}t_bin2hexstr_not_even_bytes`, `bin2hexstr(${bits(16, 5, '02')})`, '1002'),
  call(`${S}t_bin2hexstr_not_even_bytes`, `bin2hexstr(${bits(1, 4, '02')})`, '102'),
  call(`${S}t_bin2hexstr_not_even_bytes`, `bin2hexstr(${bits(1, 1, '02')})`, '102'),
  call(`${S}t_bin2hexstr_not_even_bytes`, `bin2hexstr(${bits(2, 2, '')})`, '2'),
  call(`${S}t_bin2hexstr_not_even_bytes`, `bin2hexstr(${bits(17, 9, '21')})`, '01121'),
  call(`${S}t_sqlserver_bin2hexstr`, "sqlserver_bin2hexstr(hexstr2bin('0102'))", '0x0102'),
  call(`${S}t_sqlserver_bin2hexstr`, `sqlserver_bin2hexstr(${bits(1, 3, '02')})`, '0x102'),
  call(`${S}t_sqlserver_bin2hexstr`, `sqlserver_bin2hexstr(${bits(2, 1, '02')})`, '0x002'),
  call(`${S}t_sqlserver_bin2hexstr`, `sqlserver_bin2hexstr(${bits(17, 9, '21')})`, '0x01121'),
  call(`${S}t_hex_convert`, "bin2hexstr(hexstr2bin(bin2hexstr(hexstr2bin('00FB7F80FF'))))", '00FB7F80FF'),
  call(`${S}t_hash_funcs`, "[bytesize(md5('')), bytesize(sha('x')), bytesize(sha256(hexstr2bin('FF00')))]", [32, 40, 64]),
  call(`${S}t_zip_funcs`, "bin2hexstr(unzip(zip(hexstr2bin('FBFF0001'))))", 'FBFF0001'),
  call(`${S}t_gzip_funcs`, "bin2hexstr(gunzip(gzip(hexstr2bin('FBFF0001'))))", 'FBFF0001'),
  call(`${S}t_zip_compress_funcs`, "bin2hexstr(zip_uncompress(zip_compress(hexstr2bin('FBFF0001'))))", 'FBFF0001'),
  call(`${S}t_base64_encode`, "base64_encode(hexstr2bin('FBFF0001'))", '+/8AAQ=='),
  call(`${S}t_base64_encode_no_padding`, "base64_encode(hexstr2bin('FBFF0001'), 'no_padding')", '+/8AAQ'),
  call(`${S}t_base64_encode_urlsafe`, "base64_encode(hexstr2bin('FBFF0001'), 'urlsafe')", '-_8AAQ=='),
  call(`${S}t_base64_encode_no_padding_urlsafe`, "base64_encode(hexstr2bin('FBFF0001'), 'no_padding', 'urlsafe')", '-_8AAQ'),
  call(`${S}t_base64_decode`, "bin2hexstr(base64_decode('+/8AAQ=='))", 'FBFF0001'),
  call(`${S}t_base64_decode`, "bin2hexstr(base64_decode('+/8AAQ', 'no_padding'))", 'FBFF0001'),
  call(`${S}t_base64_decode_with_opts`, "bin2hexstr(base64_decode('-_8AAQ==', 'urlsafe'))", 'FBFF0001'),
  call(`${S}t_base64_decode_with_opts`, "bin2hexstr(base64_decode('-_8AAQ', 'urlsafe', 'no_padding'))", 'FBFF0001'),
  call(`${S}t_bits_op`, '[bitnot(5), bitand(12, 10), bitor(12, 10), bitxor(12, 10), bitsl(-3, 4), bitsr(-16, 2)]', [-6, 8, 14, 6, -48, -4]),
  call(`${S}t_bitsize`, "bitsize('a')", 8),
  call(`${S}t_bitsize`, `bitsize(${bits(15, 4, '')})`, 4),
  call(`${S}t_bytesize`, "bytesize('')", 0),
  call(`${S}t_subbits`, "subbits(hexstr2bin('FF'), 1)", 1),
  call(`${S}t_subbits`, "subbits(hexstr2bin('FF'), 5)", 31),
  call(`${S}t_subbits`, "subbits(hexstr2bin('FF'), 8)", 255),
  call(`${S}t_subbits2`, "subbits(hexstr2bin('FF'), 1, 3)", 7),
  call(`${S}t_subbits2_1`, "subbits(hexstr2bin('FF'), 2, 7)", 127),
  call(`${S}t_subbits2_1`, "subbits(hexstr2bin('FF'), 2, 8)", 127),
  call(`${S}t_subbits2_integer`, "subbits(hexstr2bin('000001C8'), 1, 32, 'integer', 'signed', 'big')", 456),
  call(`${S}t_subbits2_integer`, "subbits(hexstr2bin('FFFFFE38'), 1, 32, 'integer', 'signed', 'big')", -456),
  call(`${S}t_subbits2_float`, "subbits(hexstr2bin('4015333333333333'), 1, 64, 'float', 'unsigned', 'big')", 5.3),
  call(`${S}t_subbits2_float`, "subbits(hexstr2bin('C015333333333333'), 1, 64, 'float', 'signed', 'big')", -5.3),
  call(`${S}t_subbits_4_args`, "subbits(hexstr2bin('4015333333333333'), 1, 64, 'float')", 5.3),
  call(`${S}t_subbits_5_args`, "subbits(hexstr2bin('000001C8'), 1, 32, 'integer', 'unsigned')", 456),
  call(`${S}t_subbits_not_even_bytes`, "bin2hexstr(subbits(hexstr2bin('9F4E58'), 1, 6, 'bits', 'unsigned', 'big'))", '27'),
]);
