package upi

import (
	"context"
	"time"
)

// OutcomeDay counts the payments created on one day by how they ended (or
// stand): the operator console's payment outcomes chart.
type OutcomeDay struct {
	// Day is the day's midnight in the location Outcomes was given.
	Day time.Time
	// Captured: money taken and none of it given back (charging, settled
	// at the full amount, or still on its way).
	Captured int64
	// RefundedFull: refunded in full, or a full refund under way
	// (REFUNDING, REFUNDED).
	RefundedFull int64
	// RefundedPartly: part of the capture went back (the excess over the
	// CDR's cost, an operator's refund).
	RefundedPartly int64
	// Failed: no money was taken (FAILED at the PG, or EXPIRED while
	// pending).
	Failed int64
}

// Outcomes returns one OutcomeDay per day of the days days ending with the
// day of last, in loc (UTC when nil), oldest first; payments still pending
// are not counted. Decision (the spec has no such report): a payment counts
// on the day it was created, in its present outcome, so a day's bars change
// as its payments are refunded.
func (s *Service) Outcomes(ctx context.Context, last time.Time, days int, loc *time.Location) ([]OutcomeDay, error) {
	if loc == nil {
		loc = time.UTC
	}
	if days <= 0 {
		return nil, nil
	}
	l := last.In(loc)
	end := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, 1)
	start := end.AddDate(0, 0, -days)
	out := make([]OutcomeDay, days)
	for i := range out {
		out[i].Day = start.AddDate(0, 0, i)
	}
	rows, err := s.db.Read().Query(ctx, `SELECT created_at, status, captured_paise, refunded_paise FROM upi_payments
		WHERE created_at >= $1 AND created_at < $2 AND status <> $3`, start.UnixMicro(), end.UnixMicro(), StatusPending)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var created, captured, refunded int64
		var status string
		if err := rows.Scan(&created, &status, &captured, &refunded); err != nil {
			return nil, err
		}
		t := time.UnixMicro(created).In(loc)
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		i := 0
		for i < days-1 && !out[i+1].Day.After(day) {
			i++
		}
		d := &out[i]
		switch {
		case status == StatusFailed || status == StatusExpired:
			d.Failed++
		case status == StatusRefunding || status == StatusRefunded || (captured > 0 && refunded >= captured):
			d.RefundedFull++
		case refunded > 0:
			d.RefundedPartly++
		default:
			d.Captured++
		}
	}
	return out, rows.Err()
}
