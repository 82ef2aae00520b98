-- +goose Up
-- upi_qr_mappings map the reference printed in a static QR sticker to one
-- connector of the directory. tenant_id is the CPO party that owns the
-- location ("IN*CPO"), split into country_code and party_id for lookups.
-- A qr_ref is never reused (disabled mappings keep theirs); a connector has
-- at most one ACTIVE mapping (the partial unique index), so a sticker can be
-- replaced by disabling the old mapping first.
CREATE TABLE upi_qr_mappings (
    pk            {{id}},
    qr_ref        TEXT NOT NULL UNIQUE,
    tenant_id     TEXT NOT NULL,
    country_code  TEXT NOT NULL,
    party_id      TEXT NOT NULL,
    location_id   TEXT NOT NULL,
    evse_uid      TEXT NOT NULL,
    connector_id  TEXT NOT NULL,
    -- status: ACTIVE or DISABLED.
    status        TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_updated  BIGINT NOT NULL
);
CREATE UNIQUE INDEX upi_qr_mappings_connector ON upi_qr_mappings (country_code, party_id, location_id, evse_uid, connector_id)
    WHERE status = 'ACTIVE';
CREATE INDEX upi_qr_mappings_page ON upi_qr_mappings (last_updated, pk);

-- +goose Down
DROP TABLE upi_qr_mappings;
