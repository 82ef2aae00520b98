package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// routes is the route table: every endpoint ocpihub serves, in one place.
func (s *Server) routes() {
	// Operations.
	s.handlePlain("GET /healthz", http.HandlerFunc(s.handleHealthz))
	s.handlePlain("GET /readyz", http.HandlerFunc(s.handleReadyz))
	s.handlePlain("GET /metrics", s.metricsRoute())
	s.handlePlain("GET /openapi.json", http.HandlerFunc(s.handleOpenAPI))

	// The operator console (HTML; its pages are not API operations).
	if s.cfg.Console != nil {
		s.mux.Handle("/console/", s.cfg.Console)
		s.mux.Handle("/console", s.cfg.Console)
	}

	// Versions (token A too).
	s.handle("GET /ocpi/versions", registering, s.handleVersions)
	s.handle("GET /ocpi/2.2.1", registering, s.handleVersionDetails221)
	s.handle("GET /ocpi/2.3.0", registering, s.handleVersionDetails230)
	s.routes22()

	// Credentials and hub client info.
	s.handle("GET /ocpi/2.2.1/credentials", registering, s.handleCredentialsGet)
	s.handle("POST /ocpi/2.2.1/credentials", registering, s.handleCredentialsPost)
	s.handle("PUT /ocpi/2.2.1/credentials", registering, s.handleCredentialsPut)
	s.handle("DELETE /ocpi/2.2.1/credentials", registering, s.handleCredentialsDelete)
	s.handle("GET /ocpi/2.3.0/credentials", registering, s.handleCredentialsGet)
	s.handle("POST /ocpi/2.3.0/credentials", registering, s.handleCredentialsPost)
	s.handle("PUT /ocpi/2.3.0/credentials", registering, s.handleCredentialsPut)
	s.handle("DELETE /ocpi/2.3.0/credentials", registering, s.handleCredentialsDelete)
	s.handle("GET /ocpi/2.2.1/hubclientinfo", platform, s.handleHubClientInfo)
	s.peeringRoutes()

	// Locations and tariffs: CPO receivers (a CPO pushes here) and the eMSP
	// directory (eMSPs and NSPs pull here). The short forms without
	// {cc}/{pid} are the seed's; they take the caller's only CPO party.
	if s.cfg.Locations != nil {
		for _, p := range []string{
			"/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}",
			"/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}",
			"/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}/{connector_id}",
			"/ocpi/2.2.1/cpo/locations/{location_id}",
		} {
			s.handle("GET "+p, platform, s.handleCPOLocationGet)
			s.handle("PUT "+p, platform, s.handleCPOLocationPut)
			s.handle("PATCH "+p, platform, s.handleCPOLocationPatch)
			s.handle("DELETE "+p, platform, s.handleCPOLocationDelete)
		}
		s.handle("GET /ocpi/2.2.1/emsp/locations", platform, s.handleEMSPLocations)
		s.handle("GET /ocpi/2.2.1/emsp/locations/{location_id}", platform, s.handleEMSPLocation)
		s.handle("GET /ocpi/2.2.1/emsp/locations/{location_id}/{evse_uid}", platform, s.handleEMSPLocation)
		s.handle("GET /ocpi/2.2.1/emsp/locations/{location_id}/{evse_uid}/{connector_id}", platform, s.handleEMSPLocation)
		s.handle("GET /api/locations", public, s.handleSearch)
	}
	if s.cfg.Tariffs != nil {
		for _, p := range []string{"/ocpi/2.2.1/cpo/tariffs/{cc}/{pid}/{tariff_id}", "/ocpi/2.2.1/cpo/tariffs/{tariff_id}"} {
			s.handle("GET "+p, platform, s.handleCPOTariffGet)
			s.handle("PUT "+p, platform, s.handleCPOTariffPut)
			s.handle("DELETE "+p, platform, s.handleCPOTariffDelete)
			s.handle("PATCH "+p, platform, s.handleCPOTariffPatch)
		}
		s.handle("GET /ocpi/2.2.1/emsp/tariffs", platform, s.handleEMSPTariffs)
		s.handle("GET /ocpi/2.2.1/emsp/tariffs/{tariff_id}", platform, s.handleEMSPTariff)
	}

	// Tokens: eMSPs push theirs (receiver), CPOs pull them and ask for
	// real-time authorization (sender).
	if s.cfg.Tokens != nil {
		s.handle("GET /ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}", platform, s.handleEMSPTokenGet)
		s.handle("PUT /ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}", platform, s.handleEMSPTokenPut)
		s.handle("PATCH /ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}", platform, s.handleEMSPTokenPatch)
		s.handle("GET /ocpi/2.2.1/cpo/tokens", platform, s.handleCPOTokens)
		s.handle("POST /ocpi/2.2.1/cpo/tokens/{uid}/authorize", platform, s.handleCPOTokenAuthorize)
	}

	// Sessions and CDRs: CPOs push them (receivers), eMSPs pull those of
	// their own tokens (senders) and send charging preferences.
	if s.cfg.Sessions != nil {
		s.handle("GET /ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}", platform, s.handleCPOSessionGet)
		s.handle("PUT /ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}", platform, s.handleCPOSessionPut)
		s.handle("PATCH /ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}", platform, s.handleCPOSessionPatch)
		s.handle("GET /ocpi/2.2.1/emsp/sessions", platform, s.handleEMSPSessions)
		s.handle("PUT /ocpi/2.2.1/emsp/sessions/{session_id}/charging_preferences", platform, s.handleEMSPChargingPreferences)
	}
	if s.cfg.CDRs != nil {
		s.handle("POST /ocpi/2.2.1/cpo/cdrs", platform, s.handleCPOCDRPost)
		s.handle("GET /ocpi/2.2.1/cpo/cdrs/{cc}/{pid}/{id}", platform, s.handleCPOCDRGet)
		s.handle("GET /ocpi/2.2.1/emsp/cdrs", platform, s.handleEMSPCDRs)
	}

	// Commands and charging profiles: eMSPs (and SCSPs) send them to the
	// hub as to a CPO; CPOs post the results to the hub's response_url.
	if s.cfg.Commands != nil {
		s.handle("POST /ocpi/2.2.1/emsp/commands/{command}", platform, s.handleEMSPCommand)
		s.handle("POST /ocpi/2.2.1/cpo/commands/{command}/{id}", platform, s.handleCPOCommandResult)
		s.handle("GET /ocpi/2.2.1/emsp/chargingprofiles/{session_id}", platform, s.handleEMSPChargingProfile)
		s.handle("PUT /ocpi/2.2.1/emsp/chargingprofiles/{session_id}", platform, s.handleEMSPChargingProfile)
		s.handle("DELETE /ocpi/2.2.1/emsp/chargingprofiles/{session_id}", platform, s.handleEMSPChargingProfile)
		s.handle("POST /ocpi/2.2.1/cpo/chargingprofiles/{command}/{id}", platform, s.handleCPOProfileResult)
		s.handle("PUT /ocpi/2.2.1/cpo/chargingprofiles/{session_id}", platform, s.handleCPOActiveProfile)
		s.handle("GET /admin/commands", admin, s.handleAdminCommands)
		s.handle("GET /admin/commands/{id}", admin, s.handleAdminCommand)
	}

	// Direct Payment (the 2.3.0 Payments module, also served under 2.2.1):
	// PTPs post terminals and confirmations here, CPOs read them, assign
	// terminals and ask PTPs to activate or deactivate them.
	if s.cfg.Payments != nil {
		for _, v := range []string{"2.2.1", "2.3.0"} {
			base := "/ocpi/" + v + "/payments"
			s.handle("GET "+base+"/terminals", platform, s.handlePaymentTerminals)
			s.handle("POST "+base+"/terminals", platform, s.handlePaymentTerminalPost)
			s.handle("POST "+base+"/terminals/activate", platform, s.handlePaymentActivate)
			s.handle("POST "+base+"/terminals/{terminal_id}", platform, s.handlePaymentTerminalPost)
			s.handle("GET "+base+"/terminals/{terminal_id}", platform, s.handlePaymentTerminal)
			s.handle("PUT "+base+"/terminals/{terminal_id}", platform, s.handlePaymentTerminal)
			s.handle("PATCH "+base+"/terminals/{terminal_id}", platform, s.handlePaymentTerminal)
			s.handle("POST "+base+"/terminals/{terminal_id}/deactivate", platform, s.handlePaymentDeactivate)
			s.handle("GET "+base+"/financial-advice-confirmations", platform, s.handlePaymentAdviceList)
			s.handle("POST "+base+"/financial-advice-confirmations", platform, s.handlePaymentAdvicePost)
			s.handle("GET "+base+"/financial-advice-confirmations/{financial_advice_confirmation_id}", platform, s.handlePaymentAdvice)
		}
		if s.cfg.Commands != nil {
			// A 2.3.0 PTP sends its START_SESSION here (the commands
			// objects are the same in 2.3.0).
			s.handle("POST /ocpi/2.3.0/ptp/commands/{command}", platform, s.handleEMSPCommand)
		}
		s.handle("GET /admin/payments/{authorization_reference}", admin, s.handleAdminPayment)
		s.handle("GET /admin/financial-advice/flagged", admin, s.handleAdminFlagged)
		s.handle("POST /admin/financial-advice/{record_id}/resolve", admin, s.handleAdminResolve)
	}

	// UPI QR charging.
	if s.cfg.UPI != nil {
		s.upiRoutes()
	}

	// Legacy 2.1.1 and 2.0 partners (legacy.go), and registrations in a
	// version we do not speak (3002 with the list of those we do).
	s.legacyRoutes()
	s.handle("POST /ocpi/{version}/credentials", registering, s.handleUnsupportedVersion)
	s.handle("PUT /ocpi/{version}/credentials", registering, s.handleUnsupportedVersion)

	// Operator API.
	s.handle("GET /admin/parties", admin, s.handleAdminParties)
	s.handle("GET /admin/parties/{id}", admin, s.handleAdminParty)
	s.handle("POST /admin/parties/{id}/suspend", admin, s.handleAdminPartyAction("suspend"))
	s.handle("POST /admin/parties/{id}/resume", admin, s.handleAdminPartyAction("resume"))
	s.handle("POST /admin/parties/{id}/rotate", admin, s.handleAdminPartyAction("rotate"))
	s.handle("DELETE /admin/parties/{id}", admin, s.handleAdminPartyAction("disconnect"))
	s.handle("POST /admin/parties/connect", admin, s.handleAdminConnect)
	s.handle("POST /admin/invitations", admin, s.handleAdminInvite, withoutReplay)
	s.handle("GET /admin/invitations", admin, s.handleAdminInvitations)
	s.handle("POST /admin/invitations/{id}/revoke", admin, s.handleAdminRevokeInvitation)
	s.handle("GET /admin/parties/{id}/rate_limits", admin, s.handleAdminRateLimits)
	s.handle("PUT /admin/parties/{id}/rate_limits", admin, s.handleAdminSetRateLimits)
	s.handle("GET /admin/webhooks", admin, s.handleWebhookList(adminOwner))
	s.handle("GET /admin/webhooks/{id}", admin, s.handleWebhookGet(adminOwner))
	s.handle("GET /admin/webhooks/{id}/deliveries", admin, s.handleWebhookDeliveries(adminOwner))
	s.handle("GET /admin/webhooks/{id}/deliveries/{delivery_id}", admin, s.handleWebhookDelivery(adminOwner))
	s.handle("POST /admin/webhooks/{id}/deliveries/{delivery_id}/replay", admin, s.handleWebhookReplay(adminOwner), withIdempotencyKey)
	s.handle("POST /admin/sandbox/reset", admin, s.handleAdminSandboxReset)
	s.handle("POST /admin/tariffs/price", admin, s.handleAdminTariffPrice, withoutReplay)

	// Outgoing webhook subscriptions (ours, not an OCPI module): a partner
	// manages its platform's, the admin token the operator's.
	s.handle("POST /ocpi/2.2.1/webhooks", subscriber, s.handleWebhookCreate, withIdempotencyKey)
	s.handle("GET /ocpi/2.2.1/webhooks", subscriber, s.handleWebhookList(webhookOwner))
	s.handle("GET /ocpi/2.2.1/webhooks/{id}", subscriber, s.handleWebhookGet(webhookOwner))
	s.handle("PUT /ocpi/2.2.1/webhooks/{id}", subscriber, s.handleWebhookUpdate, withIdempotencyKey)
	s.handle("PATCH /ocpi/2.2.1/webhooks/{id}", subscriber, s.handleWebhookUpdate, withIdempotencyKey)
	s.handle("DELETE /ocpi/2.2.1/webhooks/{id}", subscriber, s.handleWebhookDelete)
	s.handle("GET /ocpi/2.2.1/webhooks/{id}/deliveries", subscriber, s.handleWebhookDeliveries(webhookOwner))
	s.handle("GET /ocpi/2.2.1/webhooks/{id}/deliveries/{delivery_id}", subscriber, s.handleWebhookDelivery(webhookOwner))
	s.handle("POST /ocpi/2.2.1/webhooks/{id}/deliveries/{delivery_id}/replay", subscriber, s.handleWebhookReplay(webhookOwner), withIdempotencyKey)

	// The traffic inspector (traffic.go).
	s.trafficRoutes()

	// Anything else under /ocpi answers with an envelope, not a text 404.
	s.handle("/ocpi/", public, s.handleNoRoute)
	s.handle("/admin/", public, s.handleNoRoute)
	s.handle("/api/", public, s.handleNoRoute)
}

// handleHealthz says the process is alive.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz says whether this replica should get traffic: the database
// answers, its schema is up to date, and the server is not shutting down.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	if s.cfg.DB == nil {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.cfg.DB.Ping(ctx); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "database unreachable", "error": err.Error()})
		return
	}
	cur, latest, err := s.cfg.DB.MigrationStatus(ctx)
	if err != nil || cur < latest {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "migrations pending", "current": cur, "latest": latest})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "engine": s.cfg.DB.Engine(), "schema_version": cur})
}

// handleNoRoute answers paths no route matches: 405 with Allow when the path
// exists for other methods, 404 otherwise; an envelope either way.
func (s *Server) handleNoRoute(w http.ResponseWriter, r *http.Request) error {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/ocpi/" && pattern != "/admin/" && pattern != "/api/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return &ocpi.Error{Code: ocpi.EMETHOD, Message: r.Method + " is not supported on " + r.URL.Path + "; allowed: " + strings.Join(allow, ", ")}
	}
	return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no such endpoint: " + r.Method + " " + r.URL.Path + "; see GET /ocpi/versions"}
}
