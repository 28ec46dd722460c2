-- The ledger: how many rows each rule's action committed into each table, written in the same
-- statement (so the same transaction) as the rows themselves. It survives restarts and covers
-- every replica, so `weir reconcile` can check a table's row count against it at any time.
-- One row per (rule, sink, table, writer slot): concurrent batches never wait on each other's
-- row lock, and the table stays small (replicas × max_in_flight rows per action).
CREATE TABLE IF NOT EXISTS weir_ledger (
  rule_id    text        NOT NULL,
  sink       text        NOT NULL,
  table_name text        NOT NULL,
  writer     text        NOT NULL,
  rows       bigint      NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (rule_id, sink, table_name, writer)
);
