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

-- A hypertable where TimescaleDB can be used, a plain time-indexed table elsewhere. Decided by what
-- any role may read (a managed database's role may not read shared_preload_libraries): the
-- library is preloaded when pg_settings lists its own setting (a line in postgresql.conf alone
-- does not put it there); only then is CREATE EXTENSION tried, since without the preload
-- TimescaleDB ends the session (FATAL). A role without CREATE on the database may not create even
-- this trusted extension: the table stays plain, and weir migrate's hypertables step says why.
DO $$
DECLARE
  preloaded boolean := EXISTS (SELECT 1 FROM pg_settings WHERE name = 'timescaledb.max_background_workers');
BEGIN
  IF preloaded
     AND NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'timescaledb')
     AND EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS timescaledb;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'timescaledb not created: %', SQLERRM;
    END;
  END IF;
  IF preloaded AND EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'timescaledb') THEN
    PERFORM create_hypertable('telemetry', 'ts', if_not_exists => true, migrate_data => true);
  ELSE
    CREATE INDEX IF NOT EXISTS telemetry_ts ON telemetry (ts DESC);
  END IF;
END
$$;
