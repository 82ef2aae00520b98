package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/ocpihub/ocpihub/internal/httpapi"
)

// serveMetrics starts the metrics server on Config.MetricsAddr, if set:
// /metrics only (behind MetricsToken when set), on an address a load
// balancer need not expose. The sandbox has no metrics address of its own.
func (a *App) serveMetrics() error {
	if a.Config.MetricsAddr == "" || a.Config.Sandbox {
		return nil
	}
	l, err := net.Listen("tcp", a.Config.MetricsAddr)
	if err != nil {
		return fmt.Errorf("listen on the metrics address %s: %w", a.Config.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", httpapi.MetricsHandler(a.Registry, a.Config.MetricsToken))
	a.metricsServer = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(a.Logger.Handler(), slog.LevelWarn)}
	a.MetricsAddr = l.Addr().String()
	go func() {
		if err := a.metricsServer.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Logger.Error("metrics server stopped", "error", err)
		}
	}()
	return nil
}
