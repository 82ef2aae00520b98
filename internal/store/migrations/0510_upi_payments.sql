-- +goose Up
-- upi_orders are the PG orders the landing page creates: one per scan and
-- amount. id is ours and unguessable (the status page's URL); payment_id is
-- the captured payment that starts the order's session ('' until one is
-- captured): an order starts at most one session.
CREATE TABLE upi_orders (
    pk            {{id}},
    id            TEXT NOT NULL UNIQUE,
    pg_order_id   TEXT NOT NULL UNIQUE,
    qr_ref        TEXT NOT NULL,
    country_code  TEXT NOT NULL,
    party_id      TEXT NOT NULL,
    location_id   TEXT NOT NULL,
    evse_uid      TEXT NOT NULL,
    connector_id  TEXT NOT NULL,
    amount_paise  BIGINT NOT NULL,
    currency      TEXT NOT NULL,
    -- email receives the receipt when the driver gave one.
    email         TEXT NOT NULL DEFAULT '',
    pg_qr_id      TEXT NOT NULL DEFAULT '',
    qr_image_url  TEXT NOT NULL DEFAULT '',
    intent        TEXT NOT NULL DEFAULT '',
    payment_id    TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
);

-- upi_payments are the PG's payments on our orders, one row per
-- pg_payment_id (the dedupe of upi.md §3 is this constraint). id is ours: the
-- authorization_reference of the session and CDR and the uid of the
-- payment's token. status is the state machine of upi.md §4; pg_status the
-- PG's latest state, which only moves forward (pg.PaymentStatus.Rank).
-- Money is paise: refund_reserved counts every refund not FAILED (queued,
-- pending or processed), refunded the processed ones; the CHECKs keep the
-- sum of refunds within the capture whatever runs concurrently.
CREATE TABLE upi_payments (
    pk                    {{id}},
    id                    TEXT NOT NULL UNIQUE,
    pg_payment_id         TEXT NOT NULL UNIQUE,
    order_pk              BIGINT NOT NULL REFERENCES upi_orders (pk),
    qr_ref                TEXT NOT NULL,
    country_code          TEXT NOT NULL,
    party_id              TEXT NOT NULL,
    location_id           TEXT NOT NULL,
    evse_uid              TEXT NOT NULL,
    connector_id          TEXT NOT NULL,
    amount_paise          BIGINT NOT NULL,
    currency              TEXT NOT NULL,
    status                TEXT NOT NULL,
    pg_status             TEXT NOT NULL DEFAULT '',
    payer_vpa             TEXT NOT NULL DEFAULT '',
    error_code            TEXT NOT NULL DEFAULT '',
    error_description     TEXT NOT NULL DEFAULT '',
    captured_paise        BIGINT NOT NULL DEFAULT 0,
    capture_time          BIGINT NOT NULL DEFAULT 0,
    refund_reserved_paise BIGINT NOT NULL DEFAULT 0,
    refunded_paise        BIGINT NOT NULL DEFAULT 0,
    cost_paise            BIGINT NOT NULL DEFAULT 0,
    not_refundable_paise  BIGINT NOT NULL DEFAULT 0,
    shortfall_paise       BIGINT NOT NULL DEFAULT 0,
    token_uid             TEXT NOT NULL DEFAULT '',
    token_type            TEXT NOT NULL DEFAULT '',
    -- The START_SESSION: the command service's id, when it was sent, the CPO's CommandResponse and
    -- the CommandResult.
    command_id            TEXT NOT NULL DEFAULT '',
    command_sent_at       BIGINT NOT NULL DEFAULT 0,
    command_response      TEXT NOT NULL DEFAULT '',
    command_result        TEXT NOT NULL DEFAULT '',
    -- The session the CPO started (linked by authorization_reference) and
    -- its latest state, for the status page.
    session_country_code  TEXT NOT NULL DEFAULT '',
    session_party_id      TEXT NOT NULL DEFAULT '',
    session_id            TEXT NOT NULL DEFAULT '',
    session_status        TEXT NOT NULL DEFAULT '',
    session_kwh           TEXT NOT NULL DEFAULT '',
    session_cost_paise    BIGINT NOT NULL DEFAULT 0,
    session_start         BIGINT NOT NULL DEFAULT 0,
    session_end           BIGINT NOT NULL DEFAULT 0,
    cdr_id                TEXT NOT NULL DEFAULT '',
    cdr_kwh               TEXT NOT NULL DEFAULT '',
    settled_at            BIGINT NOT NULL DEFAULT 0,
    -- attention is why an operator must look ('' when nothing is wrong).
    attention             TEXT NOT NULL DEFAULT '',
    attention_at          BIGINT NOT NULL DEFAULT 0,
    created_at            BIGINT NOT NULL,
    last_updated          BIGINT NOT NULL,
    CHECK (refund_reserved_paise >= 0 AND refund_reserved_paise <= captured_paise),
    CHECK (refunded_paise >= 0 AND refunded_paise <= refund_reserved_paise)
);
CREATE INDEX upi_payments_page ON upi_payments (last_updated, pk);
CREATE INDEX upi_payments_status ON upi_payments (status, last_updated, pk);
CREATE INDEX upi_payments_attention ON upi_payments (attention_at) WHERE attention <> '';
CREATE INDEX upi_payments_order ON upi_payments (order_pk);

-- upi_webhook_events are the verified webhooks, stored in the request that
-- received them (deduplicated by the PG's event id) and worked by a job.
-- The normalised fields are what the job acts on; body is kept as received.
CREATE TABLE upi_webhook_events (
    pk                {{id}},
    event_id          TEXT NOT NULL UNIQUE,
    form              TEXT NOT NULL,
    type              TEXT NOT NULL,
    kind              TEXT NOT NULL,
    pg_payment_id     TEXT NOT NULL DEFAULT '',
    pg_order_id       TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL DEFAULT '',
    amount_paise      BIGINT NOT NULL DEFAULT 0,
    currency          TEXT NOT NULL DEFAULT '',
    payer_vpa         TEXT NOT NULL DEFAULT '',
    error_code        TEXT NOT NULL DEFAULT '',
    error_description TEXT NOT NULL DEFAULT '',
    payload_signed    BOOLEAN NOT NULL,
    pg_refund_id      TEXT NOT NULL DEFAULT '',
    refund_id         TEXT NOT NULL DEFAULT '',
    refund_status     TEXT NOT NULL DEFAULT '',
    refund_paise      BIGINT NOT NULL DEFAULT 0,
    -- outcome says what the job did with it.
    outcome           TEXT NOT NULL DEFAULT '',
    received_at       BIGINT NOT NULL,
    processed_at      BIGINT NOT NULL DEFAULT 0,
    body              TEXT NOT NULL
);
CREATE INDEX upi_webhook_events_payment ON upi_webhook_events (pg_payment_id);

-- upi_audit records every state change of a payment or refund: who caused
-- it (pg, cpo, operator, system) and why.
CREATE TABLE upi_audit (
    pk          {{id}},
    payment_id  TEXT NOT NULL,
    refund_id   TEXT NOT NULL DEFAULT '',
    from_state  TEXT NOT NULL,
    to_state    TEXT NOT NULL,
    actor       TEXT NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    at          BIGINT NOT NULL
);
CREATE INDEX upi_audit_payment ON upi_audit (payment_id, pk);

-- +goose Down
DROP TABLE upi_audit;
DROP TABLE upi_webhook_events;
DROP TABLE upi_payments;
DROP TABLE upi_orders;
