-- +goose Up
-- rate_limit_counters are the request counters of every token, shared by
-- the replicas of a hub on PostgreSQL (a single node on SQLite counts in
-- process). One row per token holds the three fixed windows: the start of
-- each (Unix seconds) and the requests allowed in it.
CREATE TABLE rate_limit_counters (
    key          TEXT PRIMARY KEY,
    second_start BIGINT NOT NULL,
    second_count INTEGER NOT NULL,
    minute_start BIGINT NOT NULL,
    minute_count INTEGER NOT NULL,
    hour_start   BIGINT NOT NULL,
    hour_count   INTEGER NOT NULL,
    allowed      BOOLEAN NOT NULL
);

-- +goose Down
DROP TABLE rate_limit_counters;
