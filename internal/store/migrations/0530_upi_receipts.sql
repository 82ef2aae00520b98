-- +goose Up
-- upi_receipts are the receipts of settled payments (upi.md §6), stored as
-- issued. id is long and random: it is the receipt's public URL.
CREATE TABLE upi_receipts (
    pk            {{id}},
    id            TEXT NOT NULL UNIQUE,
    payment_id    TEXT NOT NULL UNIQUE REFERENCES upi_payments (id),
    cdr_id        TEXT NOT NULL,
    amount_paise  BIGINT NOT NULL,
    currency      TEXT NOT NULL,
    energy_kwh    TEXT NOT NULL,
    ended_at      BIGINT NOT NULL,
    body          {{json}} NOT NULL,
    notified_at   BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL
);

-- +goose Down
DROP TABLE upi_receipts;
