-- +goose Up
-- The driver's phone number for the receipt's SMS, as the landing page took
-- it: sealed (sealbox), the moment they consented, and a keyed hash for the
-- per-number daily cap. Erased (all three) after the retention period.
ALTER TABLE upi_orders ADD COLUMN phone TEXT NOT NULL DEFAULT '';
ALTER TABLE upi_orders ADD COLUMN phone_key TEXT NOT NULL DEFAULT '';
ALTER TABLE upi_orders ADD COLUMN phone_consent_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX upi_orders_phone ON upi_orders (created_at) WHERE phone <> '';

-- short_code is the receipt's short link ({public_url}/r/{short_code}),
-- what an SMS carries: a DLT template variable is short.
ALTER TABLE upi_receipts ADD COLUMN short_code TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX upi_receipts_short_code ON upi_receipts (short_code) WHERE short_code <> '';

-- upi_receipt_deliveries are the receipts' sendings to drivers by SMS, one
-- row per message (the automatic one and each resend): its state (queued,
-- sent, delivered, undelivered, failed), attempts, the provider's id and the
-- last error or delivery report. phone is sealed; destination is masked.
CREATE TABLE upi_receipt_deliveries (
    pk           {{id}},
    id           TEXT NOT NULL UNIQUE,
    receipt_id   TEXT NOT NULL,
    payment_id   TEXT NOT NULL,
    channel      TEXT NOT NULL,
    phone        TEXT NOT NULL DEFAULT '',
    phone_key    TEXT NOT NULL DEFAULT '',
    destination  TEXT NOT NULL,
    status       TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    provider_id  TEXT NOT NULL DEFAULT '',
    last_error   TEXT NOT NULL DEFAULT '',
    reported_at  BIGINT NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX upi_receipt_deliveries_receipt ON upi_receipt_deliveries (receipt_id);
CREATE INDEX upi_receipt_deliveries_provider ON upi_receipt_deliveries (provider_id);

-- sms_daily counts the SMS sent to one number (its keyed hash) on one day
-- (IST): the per-number daily cap.
CREATE TABLE sms_daily (
    phone_key  TEXT NOT NULL,
    day        TEXT NOT NULL,
    sent       INTEGER NOT NULL,
    PRIMARY KEY (phone_key, day)
);

-- +goose Down
DROP TABLE sms_daily;
DROP TABLE upi_receipt_deliveries;
DROP INDEX upi_receipts_short_code;
ALTER TABLE upi_receipts DROP COLUMN short_code;
DROP INDEX upi_orders_phone;
ALTER TABLE upi_orders DROP COLUMN phone_consent_at;
ALTER TABLE upi_orders DROP COLUMN phone_key;
ALTER TABLE upi_orders DROP COLUMN phone;
