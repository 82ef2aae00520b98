-- +goose Up
-- A session paid for by UPI names its payment on the hub's session record:
-- payment_reference is the PG's payment id (upi.md §4), set by the UPI
-- module when the session first carries the payment's
-- authorization_reference.
ALTER TABLE sessions ADD COLUMN payment_reference TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sessions DROP COLUMN payment_reference;
