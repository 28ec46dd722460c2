// Map functions. Keys given to map_get/map_put are dotted paths ("a.b.c"); maps given as JSON
// strings are decoded first, as EMQX does. Maps are never changed in place: map_put returns a copy.
import { decodeJson } from '../compile/context.js';
import { getKey, putPath } from '../compile/paths.js';
import { isBinary, isObj, text } from '../values/value-types.js';
import { needStr } from './args.js';
import { def, type FunctionSpec } from './registry.js';
import { toMap } from './type.js';

function mapGet(key: unknown, map: unknown, dflt?: unknown): unknown {
  let v: unknown = map;
  for (const k of needStr('map_get', key).split('.')) {
    v = getKey(v, k);
    if (v === undefined) return dflt;
  }
  return v;
}

function mapPut(key: unknown, val: unknown, map: unknown): unknown {
  if (val === undefined) return isObj(map) ? map : {};
  const path = needStr('map_put', key)
    .split('.')
    .map((k) => ({ key: k }));
  return putPath(isObj(map) ? map : isBinary(map) ? decodeJson(text(map)) : {}, path, 0, val);
}

export const MAP_FUNCTIONS: FunctionSpec[] = [
  ...def('map', 'map_new(): map', 'An empty map.', () => ({}), { volatile: true, examples: [{ call: 'map_new()', result: {} }] }),
  ...def('map', 'map_get(string, map, any?): any', 'The value at a dotted key path, or the default (undefined).', mapGet, {
    aliases: [],
    examples: [
      { call: "map_get('a', json_decode('{ \"a\" : 1 }'))", result: 1 },
      { call: "map_get('b', json_decode('{ \"a\" : 1 }'), 2)", result: 2 },
      { call: "map_get('a.b', payload)", result: 2 },
    ],
  }),
  ...def('map', 'map_put(string, any, map): map', 'A copy of the map with the value at a dotted key path.', mapPut, {
    examples: [
      { call: "map_get('a', map_put('a', 2, json_decode('{ \"a\" : 1 }')))", result: 2 },
      { call: "map_put('x.y', 1, map_new())", result: { x: { y: 1 } } },
    ],
  }),
  ...def(
    'map',
    'mget(string, map, any?): any',
    'The value of one key (not a path), or the default.',
    (k: unknown, m: unknown, d?: unknown) => {
      const map = toMap(m);
      const key = needStr('mget', k);
      return Object.hasOwn(map, key) ? map[key] : d;
    },
    { examples: [{ call: "mget('a.b', json_decode('{\"a.b\": 1}'))", result: 1 }] },
  ),
  ...def(
    'map',
    'mput(string, any, map): map',
    'A copy of the map with one key (not a path) set.',
    (k: unknown, v: unknown, m: unknown) => {
      return putPath(toMap(m), [{ key: needStr('mput', k) }], 0, v);
    },
    { examples: [{ call: "mput('a.b', 1, map_new())", result: { 'a.b': 1 } }] },
  ),
  ...def('map', 'map_keys(map): array', 'The keys of a map.', (m: unknown) => Object.keys(toMap(m)), {
    examples: [{ call: 'map_keys(json_decode(\'{"a":1,"b":2}\'))', result: ['a', 'b'] }],
  }),
  ...def('map', 'map_values(map): array', 'The values of a map.', (m: unknown) => Object.values(toMap(m)), {
    examples: [{ call: 'map_values(json_decode(\'{"a":1,"b":2}\'))', result: [1, 2] }],
  }),
  ...def(
    'map',
    'map_size(map): int',
    'The number of keys of a map, a JSON object string, or a list of [key, value] pairs.',
    (m: unknown) => Object.keys(toMap(m)).length,
    {
      examples: [
        { call: 'map_size(map_new())', result: 0 },
        { call: 'map_size(\'{"a" : "b"}\')', result: 1 },
        { call: 'map_size(payload.a)', result: 1 },
        { call: 'map_size([])', result: 0 },
      ],
    },
  ),
  ...def(
    'map',
    'map_to_entries(map): array',
    'The entries of a map as [{key, value}].',
    (m: unknown) => Object.entries(toMap(m)).map(([key, value]) => ({ key, value })),
    {
      examples: [{ call: 'map_to_entries(json_decode(\'{"a":1}\'))', result: [{ key: 'a', value: 1 }] }],
    },
  ),
];
