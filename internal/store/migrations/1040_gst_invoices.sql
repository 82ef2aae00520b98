-- +goose Up
-- gst_counters hand out the consecutive serial numbers of GST tax invoices
-- and credit notes: one row per series and financial year, incremented in
-- the transaction that issues the document, so a rolled-back settlement
-- leaves no gap and two settlements never share a number (CGST Rules,
-- rules 46(b) and 53(1)(c)).
CREATE TABLE gst_counters (
    series  TEXT NOT NULL,
    fy      TEXT NOT NULL,
    seq     BIGINT NOT NULL,
    PRIMARY KEY (series, fy)
);

-- upi_invoices are the GST documents issued for receipts: the tax invoice
-- of a settled payment and the credit notes that correct it. body is the
-- document as issued (upi.TaxInvoice).
CREATE TABLE upi_invoices (
    pk          {{id}},
    number      TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL,
    series      TEXT NOT NULL,
    fy          TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    receipt_id  TEXT NOT NULL,
    payment_id  TEXT NOT NULL,
    issued_at   BIGINT NOT NULL,
    body        {{json}} NOT NULL,
    UNIQUE (series, fy, seq)
);
CREATE INDEX upi_invoices_receipt ON upi_invoices (receipt_id);
CREATE INDEX upi_invoices_payment ON upi_invoices (payment_id);

-- +goose Down
DROP TABLE upi_invoices;
DROP TABLE gst_counters;
