-- +goose Up
-- A receiver's pushes are delivered by one process at a time: the holder of
-- the receiver's lease. Each push used to carry a lease of its own, so a
-- claim of 64 pushes rewrote 64 rows (and their index entries) before any
-- was sent, and a renewal rewrote them again; now a claim writes nothing
-- while its process holds the receiver, and one row when it takes or
-- extends the lease (every third of the lease at most). Pushes stay
-- 'pending' until their outcome is recorded.
CREATE TABLE hub_receiver_lease (
    platform_id  BIGINT PRIMARY KEY,
    -- lease_token names the holding process (internal/instance).
    lease_token  TEXT NOT NULL,
    lease_until  BIGINT NOT NULL
);
-- Pushes leased the old way go back to their queues; the attempt their
-- holder made stays counted (the receiver may have got it).
UPDATE hub_push SET state = 'pending' WHERE state = 'leased';
ALTER TABLE hub_push DROP COLUMN lease_token;
ALTER TABLE hub_push DROP COLUMN lease_until;

-- +goose Down
ALTER TABLE hub_push ADD COLUMN lease_token TEXT NOT NULL DEFAULT '';
ALTER TABLE hub_push ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
DROP TABLE hub_receiver_lease;
