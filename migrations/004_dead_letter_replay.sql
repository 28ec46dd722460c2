-- weir dlq replay: a letter sent back through the rules is marked with when and how that ended
-- (stored, dead_lettered again, no_output), so a second replay does not send it again. A letter
-- the replay itself wrote names the one it came from (replay_of) and counts the attempts: the
-- first dead letter of a message is attempt 1. Every column is added only when missing, so the
-- file is safe on a table created by hand.
ALTER TABLE weir_dead_letter ADD COLUMN IF NOT EXISTS attempts int NOT NULL DEFAULT 1;
ALTER TABLE weir_dead_letter ADD COLUMN IF NOT EXISTS replay_of bigint;
ALTER TABLE weir_dead_letter ADD COLUMN IF NOT EXISTS replayed_at timestamptz;
ALTER TABLE weir_dead_letter ADD COLUMN IF NOT EXISTS replay_outcome text;
ALTER TABLE weir_dead_letter ADD COLUMN IF NOT EXISTS replay_note text;
-- What a replay reads: the letters not replayed yet, in id order.
CREATE INDEX IF NOT EXISTS weir_dead_letter_pending ON weir_dead_letter (id) WHERE replayed_at IS NULL;
