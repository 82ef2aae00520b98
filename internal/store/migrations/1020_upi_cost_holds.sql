-- +goose Up
-- upi_cost_holds records the settlements of UPI payments whose CDR the hub
-- flagged (its total_cost off the hub's price by more than the tolerance):
-- both totals in paise, the CDR as received (the receipt is built from it),
-- and the decision. settled_on is '' while the payment waits for the
-- operator, then 'cdr' (the CPO's total) or 'hub' (the hub's price);
-- decided_by is 'policy' or 'operator'.
CREATE TABLE upi_cost_holds (
    pk              {{id}},
    payment_id      TEXT NOT NULL UNIQUE REFERENCES upi_payments (id),
    cdr_id          TEXT NOT NULL,
    currency        TEXT NOT NULL,
    cdr_cost_paise  BIGINT NOT NULL,
    hub_cost_paise  BIGINT NOT NULL,
    cdr_body        {{json}} NOT NULL,
    held_at         BIGINT NOT NULL,
    settled_on      TEXT NOT NULL DEFAULT '',
    decided_by      TEXT NOT NULL DEFAULT '',
    decided_at      BIGINT NOT NULL DEFAULT 0,
    note            TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE upi_cost_holds;
