-- The seeds' telemetry: devices publish {"device", "seq", "ts", "temp", "hum", "location"} on
-- device/<id>/telemetry. (device_id, ts, seq) identifies a sample, so a redelivered message is
-- absorbed by ON CONFLICT DO NOTHING; the time column is part of the key, as TimescaleDB requires.
CREATE TABLE IF NOT EXISTS telemetry (
  ts          timestamptz      NOT NULL,
  device_id   text             NOT NULL,
  seq         bigint           NOT NULL,
  temp        double precision,
  humidity    double precision,
  location    text,
  received_at timestamptz      NOT NULL DEFAULT now(),
  PRIMARY KEY (device_id, ts, seq)
);

-- A hypertable where TimescaleDB is installed (preloaded), a plain time-indexed table elsewhere.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'timescaledb')
     OR (EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb')
         AND current_setting('shared_preload_libraries') LIKE '%timescaledb%') THEN
    CREATE EXTENSION IF NOT EXISTS timescaledb;
    PERFORM create_hypertable('telemetry', 'ts', if_not_exists => true, migrate_data => true);
  ELSE
    CREATE INDEX IF NOT EXISTS telemetry_ts ON telemetry (ts DESC);
  END IF;
END
$$;
