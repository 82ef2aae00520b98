-- +goose Up
-- The hub prices every CDR from its tariffs (internal/tariff) and keeps the
-- outcome beside it: price_status '' (not priced: a credit CDR), ok,
-- mismatch (the CDR's total_cost is off by more than the tolerance) or
-- unpriceable (no tariff, or one the engine refuses: price_note says why);
-- hub_total_cost and cost_difference (CDR − hub) are Price objects as JSON.
ALTER TABLE cdrs ADD COLUMN price_status TEXT NOT NULL DEFAULT '';
ALTER TABLE cdrs ADD COLUMN hub_total_cost TEXT NOT NULL DEFAULT '';
ALTER TABLE cdrs ADD COLUMN cost_difference TEXT NOT NULL DEFAULT '';
ALTER TABLE cdrs ADD COLUMN price_note TEXT NOT NULL DEFAULT '';
CREATE INDEX cdrs_price_status ON cdrs (price_status, created_at);

-- +goose Down
DROP INDEX cdrs_price_status;
ALTER TABLE cdrs DROP COLUMN price_note;
ALTER TABLE cdrs DROP COLUMN cost_difference;
ALTER TABLE cdrs DROP COLUMN hub_total_cost;
ALTER TABLE cdrs DROP COLUMN price_status;
