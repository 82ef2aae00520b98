package upi

import "github.com/prometheus/client_golang/prometheus"

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
	for _, v := range []string{StatusPending, StatusFailed, StatusExpired, StatusCaptured, StatusSessionRequested, StatusCharging,
		StatusSettled, StatusRefunding, StatusRefunded} {
		m.transitions.WithLabelValues(v)
	}
	for _, v := range []string{RefundQueued, RefundPending, RefundProcessed, RefundFailed} {
		m.refunds.WithLabelValues(v)
	}
	for _, v := range []string{AttentionCDRMissing, AttentionShortfall, AttentionRefundFailed, AttentionSessionLate, AttentionSecondSession,
		AttentionSecondCDR, AttentionCDRCurrency, AttentionCreditCDR, AttentionLongSession, AttentionRefundedAtPG, AttentionStartUndecided,
		AttentionCostMismatch} {
		m.alerts.WithLabelValues(v)
	}
	if reg != nil {
		reg.MustRegister(m.webhooks, m.transitions, m.refunds, m.alerts)
	}
	return m
}
