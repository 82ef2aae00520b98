-- +goose Up
-- settings holds the hub's own state that outlives a process: the admin
-- token hash generated at first start, the sandbox reset marker, and the like.
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE settings;
