-- +goose Up
-- Webhook deliveries run on the delivery engine (internal/delivery), whose
-- receivers are numbers: webhook_receivers gives each subscription one. It
-- is a table rather than a column so that both engines hand numbers out
-- safely under concurrent creates ({{id}}).
CREATE TABLE webhook_receivers (
    id              {{id}},
    subscription_id TEXT NOT NULL UNIQUE REFERENCES webhook_subscriptions (id) ON DELETE CASCADE
);
INSERT INTO webhook_receivers (subscription_id) SELECT id FROM webhook_subscriptions ORDER BY created_at, id;

-- The lease moves from the subscription to the delivery in flight, as in
-- hub_push: lease_token names its holder (instance.ID), so a restarted
-- process takes a dead predecessor's delivery at once.
ALTER TABLE webhook_deliveries ADD COLUMN lease_token TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_deliveries ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (lease_until) WHERE lease_token <> '';
ALTER TABLE webhook_subscriptions DROP COLUMN lease_owner;
ALTER TABLE webhook_subscriptions DROP COLUMN lease_until;

-- +goose Down
ALTER TABLE webhook_subscriptions ADD COLUMN lease_owner BIGINT NOT NULL DEFAULT 0;
ALTER TABLE webhook_subscriptions ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
DROP INDEX webhook_deliveries_leased;
ALTER TABLE webhook_deliveries DROP COLUMN lease_until;
ALTER TABLE webhook_deliveries DROP COLUMN lease_token;
DROP TABLE webhook_receivers;
