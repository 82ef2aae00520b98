-- +goose Up
-- hub_push is the ordered outbox of pushes to partners. Rows are inserted in
-- the transaction of the change they carry; for one (platform, module,
-- object_key) they are delivered strictly in id order, one at a time (the
-- worker leases the head row). The id is taken after the object's own row
-- lock, so id order is commit order for one object.
CREATE TABLE hub_push (
    id             {{id}},
    platform_id    BIGINT NOT NULL,
    module         TEXT NOT NULL,
    object_key     TEXT NOT NULL,
    method         TEXT NOT NULL,
    -- path is appended to the receiver's endpoint URL: /CC/PID/ID[/…].
    path           TEXT NOT NULL,
    body           {{json}},
    -- full is true for a PUT of the whole object: it supersedes every earlier
    -- undelivered row of the same object for the same platform.
    full_object    BOOLEAN NOT NULL DEFAULT FALSE,
    -- pending, leased, delivered, rejected, superseded, failed
    state          TEXT NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    lease_token    TEXT NOT NULL DEFAULT '',
    lease_until    BIGINT NOT NULL DEFAULT 0,
    retry_at       BIGINT NOT NULL DEFAULT 0,
    last_error     TEXT NOT NULL DEFAULT '',
    correlation_id TEXT NOT NULL DEFAULT '',
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
-- The queue index holds only open rows: delivered history does not slow the
-- head lookup of a hot object.
CREATE INDEX hub_push_queue ON hub_push (platform_id, module, object_key, id) WHERE state IN ('pending', 'leased');
CREATE INDEX hub_push_history ON hub_push (state, updated_at);

-- hub_resync marks objects a platform must get again in full: pushes that
-- failed for good, or changes made while it was OFFLINE.
CREATE TABLE hub_resync (
    platform_id  BIGINT NOT NULL,
    module       TEXT NOT NULL,
    object_key   TEXT NOT NULL,
    marked_at    BIGINT NOT NULL,
    PRIMARY KEY (platform_id, module, object_key)
);

-- +goose Down
DROP TABLE hub_resync;
DROP TABLE hub_push;
