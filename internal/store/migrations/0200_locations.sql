-- +goose Up
-- locations are the Locations CPOs publish through the hub: key columns and
-- the canonical body (the source of truth for GETs and pushes).
CREATE TABLE locations (
    pk            {{id}},
    country_code  TEXT NOT NULL,
    party_id      TEXT NOT NULL,
    id            TEXT NOT NULL,
    publish       BOOLEAN NOT NULL,
    -- coordinates in units of 1e-7 degree (exact for the 7 decimals the spec
    -- allows), for the driver search's bounding box.
    lat_e7        BIGINT NOT NULL,
    lon_e7        BIGINT NOT NULL,
    -- evses_active counts EVSEs not REMOVED: 0 means the location is expired
    -- for drivers (it stays in the OCPI directory).
    evses_active  INTEGER NOT NULL DEFAULT 0,
    last_updated  BIGINT NOT NULL,
    body          {{json}} NOT NULL,
    UNIQUE (country_code, party_id, id)
);
CREATE INDEX locations_page ON locations (last_updated, pk);
CREATE INDEX locations_party_page ON locations (country_code, party_id, last_updated, pk);
CREATE INDEX locations_geo ON locations (lat_e7, lon_e7);

-- evses index the EVSEs of each location for status queries and search; the
-- location body stays the source of truth.
CREATE TABLE evses (
    location_pk     BIGINT NOT NULL REFERENCES locations (pk) ON DELETE CASCADE,
    uid             TEXT NOT NULL,
    evse_id         TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL,
    -- max_power_w is the most powerful connector; connector_types lists the
    -- standards as ",IEC_62196_T2,CHADEMO," for LIKE filters.
    max_power_w     BIGINT NOT NULL DEFAULT 0,
    connector_types TEXT NOT NULL DEFAULT '',
    last_updated    BIGINT NOT NULL,
    PRIMARY KEY (location_pk, uid)
);
CREATE INDEX evses_status ON evses (status, location_pk);

-- tariff_refs are the tariff ids connectors reference, so a tariff DELETE can
-- name the connectors that still use it.
CREATE TABLE tariff_refs (
    country_code  TEXT NOT NULL,
    party_id      TEXT NOT NULL,
    tariff_id     TEXT NOT NULL,
    location_pk   BIGINT NOT NULL REFERENCES locations (pk) ON DELETE CASCADE,
    evse_uid      TEXT NOT NULL,
    connector_id  TEXT NOT NULL,
    PRIMARY KEY (location_pk, evse_uid, connector_id, tariff_id)
);
CREATE INDEX tariff_refs_tariff ON tariff_refs (country_code, party_id, tariff_id);

-- tariffs are the Tariffs CPOs publish.
CREATE TABLE tariffs (
    pk            {{id}},
    country_code  TEXT NOT NULL,
    party_id      TEXT NOT NULL,
    id            TEXT NOT NULL,
    last_updated  BIGINT NOT NULL,
    body          {{json}} NOT NULL,
    UNIQUE (country_code, party_id, id)
);
CREATE INDEX tariffs_page ON tariffs (last_updated, pk);
CREATE INDEX tariffs_party_page ON tariffs (country_code, party_id, last_updated, pk);

-- sync_state remembers the last successful pull of a module from a platform.
CREATE TABLE sync_state (
    platform_id  BIGINT NOT NULL,
    module       TEXT NOT NULL,
    last_sync    BIGINT NOT NULL,
    last_error   TEXT NOT NULL DEFAULT '',
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (platform_id, module)
);

-- +goose Down
DROP TABLE sync_state;
DROP TABLE tariffs;
DROP TABLE tariff_refs;
DROP TABLE evses;
DROP TABLE locations;
