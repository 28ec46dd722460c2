-- Dead letters: every output weir could not store, with why, and the original message.
CREATE TABLE IF NOT EXISTS weir_dead_letter (
  id               bigserial PRIMARY KEY,
  rule_id          text NOT NULL,
  sink             text NOT NULL,
  reason           text NOT NULL,
  error            text NOT NULL,
  topic            text NOT NULL,
  payload          bytea NOT NULL,
  record           jsonb,
  received_at      timestamptz NOT NULL,
  dead_lettered_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS weir_dead_letter_received_at ON weir_dead_letter (received_at);
CREATE INDEX IF NOT EXISTS weir_dead_letter_rule_reason ON weir_dead_letter (rule_id, reason);
