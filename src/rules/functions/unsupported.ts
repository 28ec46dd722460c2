// EMQX built-in functions weir does not provide, and why. Calling one is a compile error that
// gives the reason; docs/rule-functions.md lists them beside the supported ones.

export const UNSUPPORTED: Readonly<Record<string, string>> = {
  term_encode: 'Erlang external term format has no meaning outside an Erlang VM.',
  term_decode: 'Erlang external term format has no meaning outside an Erlang VM.',
  proc_dict_get: "state in the Erlang process dictionary: weir's rules are pure and may run on any core, in any order.",
  proc_dict_put: "state in the Erlang process dictionary: weir's rules are pure and may run on any core, in any order.",
  proc_dict_del: "state in the Erlang process dictionary: weir's rules are pure and may run on any core, in any order.",
  kv_store_get: 'a node-wide mutable store: weir rules are pure, so redelivered messages give the same outputs.',
  kv_store_put: 'a node-wide mutable store: weir rules are pure, so redelivered messages give the same outputs.',
  kv_store_del: 'a node-wide mutable store: weir rules are pure, so redelivered messages give the same outputs.',
  mongo_date: 'EMQX Enterprise, for its MongoDB bridge; weir has no MongoDB sink.',
  map_to_redis_hset_args: 'builds arguments for the Redis bridge only; weir has no Redis sink.',
  getenv:
    'reads the host environment; weir rules do no I/O, and rule files are not interpolated (there ${x} is a template over the output). Only weir.yaml takes ${ENV}: put the value in its `node` (node: ${SITE}) and read the `node` event field.',
};
