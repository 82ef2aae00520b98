package tracing_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/tracing"
)

// patchBroadcast registers a CPO and an eMSP, stores a location, then
// PATCHes its EVSE with X-Correlation-ID cid and waits for the eMSP to
// have it.
func patchBroadcast(t *testing.T, ctx context.Context, h *hubtest.Hub, cid string) *sim.EMSP {
	t.Helper()
	cpo := hubtest.Add(t, h, sim.StartCPO, "CPO One", "NL", "CP1")
	emsp := hubtest.Add(t, h, sim.StartEMSP, "eMSP One", "DE", "EM1")
	if resp, err := cpo.Push(ctx, "locations", http.MethodPut, hubtest.Location("NL", "CP1", "LOC1", "AVAILABLE", hubtest.Stamp(0)), nil, "LOC1"); err != nil || resp.HTTPStatus != http.StatusCreated {
		t.Fatalf("PUT location: %v %v", resp, err)
	}
	if err := emsp.Until(ctx, func() bool { return emsp.EVSEStatus("NL", "CP1", "LOC1", "E1") == "AVAILABLE" }); err != nil {
		t.Fatal(err)
	}
	base, _ := cpo.HubEndpoint("locations", "RECEIVER")
	hdr := http.Header{}
	hdr.Set("X-Correlation-ID", cid)
	resp, err := cpo.Raw(ctx, http.MethodPatch, base+"/NL/CP1/LOC1/E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)}, hdr)
	if err != nil || resp.HTTPStatus != http.StatusOK {
		t.Fatalf("PATCH: %v %v", resp, err)
	}
	if err := emsp.Until(ctx, func() bool { return emsp.EVSEStatus("NL", "CP1", "LOC1", "E1") == "CHARGING" }); err != nil {
		t.Fatal(err)
	}
	return emsp
}

// TestBroadcastTrace is the OpenTelemetry story end to end: a CPO's EVSE
// PATCH reaches a collector as one trace — the inbound server span, its
// write transaction, the push job and the client span of the push — and
// the eMSP's request carries that trace, the client span as its parent.
func TestBroadcastTrace(t *testing.T) {
	t.Parallel()
	col := tracing.NewCollector(t)
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		cid := "otel-" + string(h.Engine) + "-1"
		emsp := patchBroadcast(t, ctx, h, cid)
		trace := ocpiclient.TraceIDFor(cid)
		patches := emsp.Requests(sim.PathHas(http.MethodPatch, "/locations/NL/CP1/LOC1/E1"))
		if len(patches) != 1 {
			t.Fatalf("%d PATCHes", len(patches))
		}
		tp := patches[0].Header.Get("traceparent")
		if ocpiclient.ParseTraceParent(tp) != trace {
			t.Fatalf("the eMSP got traceparent %q, want trace %s", tp, trace)
		}

		var server, tx, job, client tracing.SpanJSON
		found := func() bool {
			if err := h.Tracer.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			server, tx, job, client = tracing.SpanJSON{}, tracing.SpanJSON{}, tracing.SpanJSON{}, tracing.SpanJSON{}
			spans := col.Spans()
			for _, s := range spans {
				if s.Kind == tracing.Server && s.TraceID == trace && s.Attr("http.request.method") == http.MethodPatch {
					server = s
				}
				if s.Kind == tracing.Client && s.Attr("http.request.method") == http.MethodPatch && tp == "00-"+s.TraceID+"-"+s.SpanID+"-01" {
					client = s
				}
			}
			// The request's transactions; the one that recorded the change
			// is the parent of the push's attempt.
			txs := map[string]tracing.SpanJSON{}
			for _, s := range spans {
				if s.Name == "transaction" && server.SpanID != "" && s.ParentSpanID == server.SpanID {
					txs[s.SpanID] = s
				}
			}
			for _, s := range spans {
				if p, ok := txs[s.ParentSpanID]; ok && s.Kind == tracing.Consumer && s.Name == "push locations" {
					tx, job = p, s
				}
			}
			// The attempt's span ends after the call: wait for it too.
			return server.SpanID != "" && tx.SpanID != "" && job.SpanID != "" && client.SpanID != "" &&
				client.ParentSpanID == job.SpanID
		}
		if err := hubtest.Until(ctx, 50*time.Millisecond, found); err != nil {
			t.Fatalf("spans of trace %s (the push's call under its attempt, under the request's transaction): server %+v tx %+v job %+v client %+v (%d spans in all)",
				trace, server, tx, job, client, len(col.Spans()))
		}
		// The CPO (ocpiclient) sent a traceparent of the chain's trace: the
		// server span continues it.
		if server.Attr("http.route") == "" || server.Attr("ocpi.status_code") != "1000" || server.Attr("http.response.status_code") != "200" ||
			server.Attr("ocpi.partner") != "CPO One" || server.Attr("ocpi.correlation_id") != cid {
			t.Errorf("server span %+v", server)
		}
		wantDB := map[string]string{"sqlite": "sqlite", "postgres": "postgresql"}[string(h.Engine)]
		if tx.Attr("db.system.name") != wantDB || tx.Kind != tracing.Client || job.Attr("hub.push_attempt") != "1" || job.TraceID != trace {
			t.Errorf("transaction span %+v, push attempt span %+v", tx, job)
		}
		// The push is in the chain's trace, its call under the attempt.
		if client.TraceID != trace || client.Attr("ocpi.to_party") != "DE/EM1" || client.Attr("ocpi.correlation_id") != cid {
			t.Errorf("client span %+v", client)
		}
		for _, k := range col.Header() {
			if k != "otel-key" {
				t.Errorf("an export came with Api-Key %q", k)
			}
		}
	}, func(o *hubtest.Options) {
		o.Config = func(c *app.Config) {
			c.OTLPEndpoint = col.URL()
			c.OTLPHeaders = "api-key=otel-key"
		}
	})
}

// TestCollectorDown: with the collector unreachable the hub serves and
// pushes as ever; the spans are dropped and counted.
func TestCollectorDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		patchBroadcast(t, ctx, h, "otel-down-"+string(h.Engine))
		tr := h.Tracer
		h.Close()
		if tr.Dropped() == 0 || tr.Exported() != 0 {
			t.Errorf("dropped %d, exported %d", tr.Dropped(), tr.Exported())
		}
	}, func(o *hubtest.Options) {
		o.Config = func(c *app.Config) { c.OTLPEndpoint = down }
	})
}
