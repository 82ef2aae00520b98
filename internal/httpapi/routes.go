package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/pages"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// routes assembles the route table: the rows of every module this hub
// serves (rows.go), the operator console and the driver's pages (HTML; not
// API operations).
func (s *Server) routes() {
	for _, r := range s.served() {
		s.add(r)
	}
	if s.cfg.Console != nil {
		s.mux.Handle("/console/", s.cfg.Console)
		s.mux.Handle("/console", s.cfg.Console)
	}
	if s.cfg.UPI != nil {
		pages.Register(s.mux, pages.Config{UPI: s.cfg.UPI, RateLimiter: s.cfg.RateLimiter, Sandbox: s.cfg.Sandbox, Clock: s.clock, Logger: s.logger})
	}
}

// handleHealthz says the process is alive.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	kit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz says whether this replica should get traffic: the database
// answers, its schema is up to date, and the server is not shutting down.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		kit.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	if s.cfg.DB == nil {
		kit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.cfg.DB.Ping(ctx); err != nil {
		kit.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "database unreachable", "error": err.Error()})
		return
	}
	cur, latest, err := s.cfg.DB.MigrationStatus(ctx)
	if err != nil || cur < latest {
		kit.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "migrations pending", "current": cur, "latest": latest})
		return
	}
	kit.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "engine": s.cfg.DB.Engine(), "schema_version": cur})
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
