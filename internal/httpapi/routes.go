package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// routes is the route table: every endpoint ocpihub serves, in one place.
func (s *Server) routes() {
	// Operations.
	s.mux.HandleFunc("GET /healthz", s.handleHealthz)
	s.mux.HandleFunc("GET /readyz", s.handleReadyz)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{}))

	// Versions (token A too).
	s.handle("GET /ocpi/versions", registering, s.handleVersions)
	s.handle("GET /ocpi/2.2.1", registering, s.handleVersionDetails221)

	// Anything else under /ocpi answers with an envelope, not a text 404.
	s.handle("/ocpi/", public, func(w http.ResponseWriter, r *http.Request) error {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no such endpoint: " + r.Method + " " + r.URL.Path + "; see GET /ocpi/versions"}
	})
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
