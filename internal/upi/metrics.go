package upi

import (
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the module's counters on the app's registry.
type metrics struct {
	webhooks    *prometheus.CounterVec // outcome: stored, duplicate, bad_signature, stale, malformed
	transitions *prometheus.CounterVec // to: the payment state entered
	refunds     *prometheus.CounterVec // status: the refund state entered
	alerts      *prometheus.CounterVec // reason: cdr_missing, shortfall, …
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ocpihub_upi_webhooks_total",
			Help: "Payment gateway webhooks received, by outcome."}, []string{"outcome"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ocpihub_upi_payment_transitions_total",
			Help: "UPI payment state changes, by the state entered."}, []string{"to"}),
		refunds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ocpihub_upi_refund_transitions_total",
			Help: "UPI refund state changes, by the state entered."}, []string{"status"}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ocpihub_upi_alerts_total",
			Help: "UPI payments flagged for the operator, by reason (cdr_missing, shortfall, …)."}, []string{"reason"}),
	}
	// Every known label value exists from the start, at 0, so dashboards
	// and alerts can be built before the first event.
	for _, v := range []string{"stored", "duplicate", "bad_signature", "stale", "malformed", "ignored"} {
		m.webhooks.WithLabelValues(v)
	}
	for _, v := range []string{paymentrow.StatusPending, paymentrow.StatusFailed, paymentrow.StatusExpired, paymentrow.StatusCaptured, paymentrow.StatusSessionRequested, paymentrow.StatusCharging,
		paymentrow.StatusSettled, paymentrow.StatusRefunding, paymentrow.StatusRefunded} {
		m.transitions.WithLabelValues(v)
	}
	for _, v := range []string{refunds.Queued, refunds.Pending, refunds.Processed, refunds.Failed} {
		m.refunds.WithLabelValues(v)
	}
	for _, v := range []string{paymentrow.AttentionCDRMissing, paymentrow.AttentionShortfall, paymentrow.AttentionRefundFailed, paymentrow.AttentionSessionLate, paymentrow.AttentionSecondSession,
		paymentrow.AttentionSecondCDR, paymentrow.AttentionCDRCurrency, paymentrow.AttentionCreditCDR, paymentrow.AttentionLongSession, paymentrow.AttentionRefundedAtPG, paymentrow.AttentionStartUndecided,
		AttentionCostMismatch} {
		m.alerts.WithLabelValues(v)
	}
	if reg != nil {
		reg.MustRegister(m.webhooks, m.transitions, m.refunds, m.alerts)
	}
	return m
}
