-- +goose Up
-- idempotency_keys remember the answers to POST, PUT and PATCH requests that
-- carried an X-Request-ID or an Idempotency-Key, per caller, for 24 hours:
-- a repeated request gets the stored answer instead of a second effect.
-- status 0 marks a request still being processed.
CREATE TABLE idempotency_keys (
    id          {{id}},
    caller      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status      INTEGER NOT NULL DEFAULT 0,
    header      {{json}},
    body        {{bytes}},
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    UNIQUE (caller, kind, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
