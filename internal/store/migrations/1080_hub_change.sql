-- +goose Up
-- hub_change is the one durable record a broadcast writes in the transaction
-- of its change: the delivery side expands it, in batches and off the
-- request path, into a hub_push row per receiver (resolved then, from the
-- cached routing table) and deletes it in the same transaction. The id is
-- taken under the object's own row lock, so for one object id order is
-- commit order; expansion goes in id order, so the per-receiver rows keep it.
CREATE TABLE hub_change (
    id                {{id}},
    sender            BIGINT NOT NULL,
    -- audience: the receiving roles, comma-separated (EMSP,NSP,OTHER,HUB).
    audience          TEXT NOT NULL,
    module            TEXT NOT NULL,
    object_key        TEXT NOT NULL,
    method            TEXT NOT NULL,
    path              TEXT NOT NULL,
    body              {{json}},
    full_object       BOOLEAN NOT NULL DEFAULT FALSE,
    correlation_id    TEXT NOT NULL DEFAULT '',
    to_country_code   TEXT NOT NULL DEFAULT '',
    to_party_id       TEXT NOT NULL DEFAULT '',
    from_country_code TEXT NOT NULL DEFAULT '',
    from_party_id     TEXT NOT NULL DEFAULT '',
    iface             TEXT NOT NULL DEFAULT 'RECEIVER',
    created_at        BIGINT NOT NULL
);

-- hub_fanout is one row whose lock serializes expansions (replicas on one
-- PostgreSQL), so per-receiver rows are inserted in change order.
CREATE TABLE hub_fanout (
    id          INTEGER PRIMARY KEY,
    expanded    BIGINT NOT NULL DEFAULT 0
);
INSERT INTO hub_fanout (id, expanded) VALUES (1, 0);

-- +goose Down
DROP TABLE hub_fanout;
DROP TABLE hub_change;
