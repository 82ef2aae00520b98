-- +goose Up
-- hub_initial_load is the progress of the initial load of one receiver: when
-- a platform gains the RECEIVER interface of a module the hub holds data for
-- (locations, tariffs, hubclientinfo), the hub pushes what exists, a batch
-- at a time. cursor is the last object sent (the module table's pk), so a
-- restarted hub carries on where it stopped; done_at is set once the whole
-- module went out.
CREATE TABLE hub_initial_load (
    platform_id  BIGINT NOT NULL,
    module       TEXT NOT NULL,
    cursor       BIGINT NOT NULL DEFAULT 0,
    sent         BIGINT NOT NULL DEFAULT 0,
    started_at   BIGINT NOT NULL,
    done_at      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (platform_id, module)
);

-- +goose Down
DROP TABLE hub_initial_load;
