-- +goose Up
-- upi_refunds are refunds of UPI payments, by the operator or internal (the
-- full refund of a failed start, the excess after the CDR). refund_id is the
-- idempotency key end to end (the PG's X-Refund-Idempotency); internal
-- refunds have deterministic ids, so a payment is never refunded twice for
-- one reason. status: QUEUED (not yet accepted by the PG), PENDING (accepted),
-- PROCESSED, FAILED. request is what was asked, to tell a repeated request
-- from a different one with the same id.
CREATE TABLE upi_refunds (
    pk            {{id}},
    refund_id     TEXT NOT NULL UNIQUE,
    payment_id    TEXT NOT NULL REFERENCES upi_payments (id),
    amount_paise  BIGINT NOT NULL CHECK (amount_paise > 0),
    currency      TEXT NOT NULL,
    status        TEXT NOT NULL,
    reason        TEXT NOT NULL,
    kind          TEXT NOT NULL,
    pg_refund_id  TEXT NOT NULL DEFAULT '',
    attempts      INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    last_updated  BIGINT NOT NULL
);
CREATE INDEX upi_refunds_payment ON upi_refunds (payment_id);
CREATE INDEX upi_refunds_pg ON upi_refunds (pg_refund_id);
CREATE INDEX upi_refunds_page ON upi_refunds (last_updated, pk);

-- +goose Down
DROP TABLE upi_refunds;
