-- +goose Up
-- terminals are the payment terminals PTPs register through the hub
-- (payments.md §3): key columns and the canonical body. terminal_id is unique
-- across the hub (CPOs address terminals by it alone). The customer is the
-- CPO the terminal serves: the party its body names, or the owner of the
-- locations it is assigned to; empty until one of them says.
CREATE TABLE terminals (
    pk                    {{id}},
    terminal_id           TEXT NOT NULL UNIQUE,
    ptp_platform_id       BIGINT NOT NULL,
    ptp_country_code      TEXT NOT NULL,
    ptp_party_id          TEXT NOT NULL,
    cpo_country_code      TEXT NOT NULL DEFAULT '',
    cpo_party_id          TEXT NOT NULL DEFAULT '',
    -- deactivation_requested_at is when a CPO last asked the PTP to
    -- deactivate the terminal (0: never).
    deactivation_requested_at BIGINT NOT NULL DEFAULT 0,
    last_updated          BIGINT NOT NULL,
    body                  {{json}} NOT NULL,
    created_at            BIGINT NOT NULL
);
CREATE INDEX terminals_page ON terminals (last_updated, pk);
CREATE INDEX terminals_ptp_page ON terminals (ptp_country_code, ptp_party_id, last_updated, pk);
CREATE INDEX terminals_cpo_page ON terminals (cpo_country_code, cpo_party_id, last_updated, pk);

-- terminal_targets index what a terminal serves: its location_ids (evse_uid
-- '') and its evse_uids with the location each was found in.
CREATE TABLE terminal_targets (
    terminal_pk  BIGINT NOT NULL REFERENCES terminals (pk) ON DELETE CASCADE,
    location_id  TEXT NOT NULL,
    evse_uid     TEXT NOT NULL,
    PRIMARY KEY (terminal_pk, location_id, evse_uid)
);
CREATE INDEX terminal_targets_location ON terminal_targets (location_id, evse_uid);

-- direct_payments are the pre-authorised sessions of PTPs, one per
-- authorization_reference (unique across the hub, upper case): the command
-- that started it and the session and CDR that came back, linked as they
-- arrive. ptp_* name the PTP, cpo_* the CPO (empty until known).
CREATE TABLE direct_payments (
    authorization_reference TEXT PRIMARY KEY,
    reference               TEXT NOT NULL,
    ptp_platform_id         BIGINT NOT NULL,
    ptp_country_code        TEXT NOT NULL,
    ptp_party_id            TEXT NOT NULL,
    cpo_country_code        TEXT NOT NULL DEFAULT '',
    cpo_party_id            TEXT NOT NULL DEFAULT '',
    location_id             TEXT NOT NULL DEFAULT '',
    evse_uid                TEXT NOT NULL DEFAULT '',
    connector_id            TEXT NOT NULL DEFAULT '',
    command_id              TEXT NOT NULL DEFAULT '',
    session_id              TEXT NOT NULL DEFAULT '',
    cdr_id                  TEXT NOT NULL DEFAULT '',
    -- cdr_total_* are the CDR's total_cost (decimal text; incl empty when
    -- the CDR gives none) and currency, to compare confirmations with.
    cdr_total_excl          TEXT NOT NULL DEFAULT '',
    cdr_total_incl          TEXT NOT NULL DEFAULT '',
    cdr_currency            TEXT NOT NULL DEFAULT '',
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL
);
CREATE INDEX direct_payments_session ON direct_payments (cpo_country_code, cpo_party_id, session_id);

-- financial_advice are the financial advice confirmations PTPs post
-- (payments.md §4), unique per PTP party and id. match_state is matched (the
-- CDR is linked), awaiting_cdr (the payment is known, its CDR not yet) or
-- unmatched (no payment has the authorization_reference). flag is the
-- operator's attention ('' = none): unmatched, capture_failed,
-- currency_mismatch or amount_mismatch. forward_state tells where the
-- confirmation is on its way to the CPO: waiting (no CPO known yet),
-- queued, delivered, or not_offered (the CPO has no payments receiver and
-- pulls).
CREATE TABLE financial_advice (
    pk                      {{id}},
    ptp_platform_id         BIGINT NOT NULL,
    ptp_country_code        TEXT NOT NULL,
    ptp_party_id            TEXT NOT NULL,
    id                      TEXT NOT NULL,
    authorization_reference TEXT NOT NULL,
    cpo_country_code        TEXT NOT NULL DEFAULT '',
    cpo_party_id            TEXT NOT NULL DEFAULT '',
    currency                TEXT NOT NULL,
    total_excl              TEXT NOT NULL,
    total_incl              TEXT NOT NULL DEFAULT '',
    capture_status_code     TEXT NOT NULL,
    match_state             TEXT NOT NULL,
    flag                    TEXT NOT NULL DEFAULT '',
    flag_detail             TEXT NOT NULL DEFAULT '',
    flagged_at              BIGINT NOT NULL DEFAULT 0,
    resolved_at             BIGINT NOT NULL DEFAULT 0,
    resolution              TEXT NOT NULL DEFAULT '',
    forward_state           TEXT NOT NULL,
    last_updated            BIGINT NOT NULL,
    body                    {{json}} NOT NULL,
    created_at              BIGINT NOT NULL,
    UNIQUE (ptp_country_code, ptp_party_id, id)
);
CREATE INDEX financial_advice_page ON financial_advice (last_updated, pk);
CREATE INDEX financial_advice_ptp_page ON financial_advice (ptp_country_code, ptp_party_id, last_updated, pk);
CREATE INDEX financial_advice_cpo_page ON financial_advice (cpo_country_code, cpo_party_id, last_updated, pk);
CREATE INDEX financial_advice_reference ON financial_advice (authorization_reference);
CREATE INDEX financial_advice_flagged ON financial_advice (flag, flagged_at);

-- +goose Down
DROP TABLE financial_advice;
DROP TABLE direct_payments;
DROP TABLE terminal_targets;
DROP TABLE terminals;
