package payment

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// source gives the hub the current state of a payments object for a
// resync: a terminal for its CPO (POST in full) or its PTP (PUT of the
// assignment), or a confirmation for its CPO.
type source struct{ s *Service }

// Current implements hub.Source.
func (src source) Current(ctx context.Context, tx *store.Tx, key string) (hub.Push, bool, error) {
	parts := hub.SplitKey(key)
	switch {
	case len(parts) == 2 && parts[0] == "CPO-TERMINAL":
		t, found, err := lockTerminal(ctx, tx, parts[1])
		if err != nil || !found || t.cpo.IsZero() {
			return hub.Push{}, false, err
		}
		return hub.Push{Method: http.MethodPost, Path: "/terminals", Body: t.body, To: t.cpo, From: t.ptp,
			Interface: ocpi.InterfaceReceiver}, true, nil
	case len(parts) == 2 && parts[0] == "PTP-TERMINAL":
		t, found, err := lockTerminal(ctx, tx, parts[1])
		if err != nil || !found {
			return hub.Push{}, false, err
		}
		var term ocpi.Terminal
		if err := ocpi.Decode(t.body, &term); err != nil {
			return hub.Push{}, false, err
		}
		body, err := assignmentBody(&term)
		if err != nil {
			return hub.Push{}, false, err
		}
		// A PUT (which the PTP merges, gaps.md §14e): the hub answers a
		// rejected PATCH with a resync, a rejected resync ends there.
		return hub.Push{Method: http.MethodPut, Path: "/terminals/" + url.PathEscape(t.id), Body: body, To: t.ptp, From: t.cpo,
			Interface: ocpi.InterfaceSender}, true, nil
	case len(parts) == 4 && parts[0] == "CPO-FAC":
		args := []any{parts[1], parts[2], parts[3]}
		if _, err := tx.Lock(ctx, "financial_advice", "last_updated", "ptp_country_code = $1 AND ptp_party_id = $2 AND id = $3", args...); err != nil {
			return hub.Push{}, false, err
		}
		a, err := scanAdvice(tx.QueryRow(ctx, "SELECT "+adviceColumns+" FROM financial_advice WHERE ptp_country_code = $1 AND ptp_party_id = $2 AND id = $3", args...))
		if errors.Is(err, store.ErrNoRows) || (err == nil && a.CPO == nil) {
			return hub.Push{}, false, nil
		}
		if err != nil {
			return hub.Push{}, false, err
		}
		return hub.Push{Method: http.MethodPost, Path: advicePath, Body: a.body, To: *a.CPO, From: a.PTP,
			Interface: ocpi.InterfaceReceiver}, true, nil
	}
	return hub.Push{}, false, nil
}

// delivered records that a confirmation reached its CPO.
func (s *Service) delivered(ctx context.Context, d hub.Delivery) {
	parts := hub.SplitKey(d.ObjectKey)
	if len(parts) != 4 || parts[0] != "CPO-FAC" {
		return
	}
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE financial_advice SET forward_state = $1 WHERE ptp_country_code = $2 AND ptp_party_id = $3 AND id = $4`,
			ForwardDelivered, parts[1], parts[2], parts[3])
		return err
	})
	if err != nil {
		s.logger.WarnContext(ctx, "could not record a confirmation's delivery", "object", d.ObjectKey, "error", err)
	}
}

// adaptAdvice writes a confirmation pushed to a CPO in the Price shape of
// the CPO's version.
func adaptAdvice(version, method, path string, body []byte) []byte {
	if !strings.HasSuffix(path, advicePath) {
		return body
	}
	doc, err := ocpi.ParseObject(body)
	if err != nil {
		return body
	}
	out, err := ocpi.MarshalObject(ocpi.AdviceFor(doc, version))
	if err != nil {
		return body
	}
	return out
}

// adaptPrices writes the Price fields of sessions and CDRs pushed to a
// 2.3.0 partner in the 2.3.0 shape.
func adaptPrices(fields []string) hub.AdaptFunc {
	return func(version, method, path string, body []byte) []byte {
		if !ocpi.IsVersion230(version) {
			return body
		}
		doc, err := ocpi.ParseObject(body)
		if err != nil {
			return body
		}
		ocpi.PricesTo230(doc, fields...)
		out, err := ocpi.MarshalObject(doc)
		if err != nil {
			return body
		}
		return out
	}
}

// eventParty names a party an event concerns.
type eventParty = event.Party

// emitFlagged records financial_advice.flagged in tx.
func (s *Service) emitFlagged(ctx context.Context, tx *store.Tx, data map[string]any, parties []eventParty) error {
	return s.events.Emit(ctx, tx, event.Event{Name: event.FinancialAdviceFlagged, Data: data, Parties: parties})
}

// metrics are the package's Prometheus series.
type metrics struct {
	flagged *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{flagged: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocpihub_payment_advice_flagged_total",
		Help: "Financial advice confirmations flagged for the operator, by reason (unmatched, capture_failed, currency_mismatch, amount_mismatch, amount_unverified, duplicate_capture).",
	}, []string{"reason"})}
	// Every reason exists from the start, at 0, so alerts can be built
	// before the first flag.
	for _, f := range Flags() {
		m.flagged.WithLabelValues(f)
	}
	if reg != nil {
		reg.MustRegister(m.flagged)
	}
	return m
}

func itoa(n int) string { return strconv.Itoa(n) }
