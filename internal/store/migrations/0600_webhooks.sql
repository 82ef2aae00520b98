-- +goose Up
-- webhook_subscriptions are outgoing webhook subscriptions. platform_id is
-- the owner: a partner platform, or 0 for the hub operator (admin token).
-- The lease columns make one worker at a time the sender for a
-- subscription, so its deliveries leave in order (webhook/deliver.go).
CREATE TABLE webhook_subscriptions (
    id              TEXT PRIMARY KEY,
    platform_id     BIGINT NOT NULL,
    url             TEXT NOT NULL,
    secret          TEXT NOT NULL,
    status          TEXT NOT NULL,
    disabled_reason TEXT NOT NULL DEFAULT '',
    -- failures counts consecutive failed attempts (the backoff step);
    -- failing_since is the first of them (0 when healthy).
    failures        INTEGER NOT NULL DEFAULT 0,
    failing_since   BIGINT NOT NULL DEFAULT 0,
    lease_owner     BIGINT NOT NULL DEFAULT 0,
    lease_until     BIGINT NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX webhook_subscriptions_owner ON webhook_subscriptions (platform_id, created_at);

-- webhook_subscription_events lists the event names of each subscription,
-- so that emitting an event finds its subscribers through an index.
CREATE TABLE webhook_subscription_events (
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event           TEXT NOT NULL,
    PRIMARY KEY (subscription_id, event)
);
CREATE INDEX webhook_subscription_events_event ON webhook_subscription_events (event);

-- webhook_events are emitted events that have at least one delivery; the
-- payload is kept once, whatever the number of subscribers.
CREATE TABLE webhook_events (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    -- data is the payload exactly as the emitter encoded it (TEXT on both
    -- engines: JSONB would reorder its keys).
    data       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX webhook_events_created ON webhook_events (created_at);

-- webhook_deliveries are the delivery log: one row per event and
-- subscription (and per replay).
CREATE TABLE webhook_deliveries (
    id              {{id}},
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    event           TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    response_code   INTEGER NOT NULL DEFAULT 0,
    latency_us      BIGINT NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    replay_of       BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    last_attempt_at BIGINT NOT NULL DEFAULT 0,
    delivered_at    BIGINT NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (subscription_id, id);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (subscription_id, id) WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_updated ON webhook_deliveries (updated_at) WHERE status <> 'PENDING';

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_subscription_events;
DROP TABLE webhook_subscriptions;
