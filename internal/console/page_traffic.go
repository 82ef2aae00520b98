package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/traffic"
)

// trafficModules are the modules the traffic filter offers.
var trafficModules = []string{"locations", "tariffs", "tokens", "sessions", "cdrs", "commands", "chargingprofiles",
	"credentials", "versions", "hubclientinfo", "clientinfo", "payments", "webhooks"}

type trafficView struct {
	Exchanges []traffic.Exchange
	Pager     ui.Pager
	Modules   []string
	Classes   []string
	// Export is the query of the current filter, for the export links.
	Export string
}

type exchangeView struct {
	traffic.Exchange
	RequestBody, ResponseBody string
}

// PageTitle names the page after the exchange.
func (v exchangeView) PageTitle() string { return v.Method + " " + strconv.FormatInt(v.ID, 10) }

// chainView is the hops of one correlation id on a time line.
type chainView struct {
	CorrelationID string
	Hops          []chainHop
	// Width and Height size the time line's drawing; TotalMS is the span
	// from the first hop's start to the last hop's end.
	Width, Height int
	TotalMS       string
}

type chainHop struct {
	traffic.Exchange
	// X, W and Y place the hop's bar on the time line; StartMS is its
	// offset from the chain's start.
	X, W, Y int
	StartMS string
}

// PageTitle names the chain.
func (v chainView) PageTitle() string { return "Chain " + v.CorrelationID }

func (c *Console) trafficPages() ([]ui.Page, []ui.Action) {
	if c.cfg.DB == nil {
		return nil, nil
	}
	return []ui.Page{
		{
			Path: "/traffic", Title: "Traffic", Section: "Integrations", Nav: "Traffic", Template: "traffic", Refresh: 10,
			Load: func(r *http.Request) (any, error) {
				f, err := consoleTrafficFilter(r.URL.Query())
				if err != nil {
					return nil, err
				}
				f.Limit = 50
				list, next, err := traffic.List(r.Context(), c.cfg.DB.Read(), f)
				if err != nil {
					return nil, err
				}
				q := r.URL.Query()
				q.Del("after")
				return trafficView{Exchanges: list, Pager: ui.KeysetPager(r, len(list), next, next != 0), Modules: trafficModules,
					Classes: []string{"2xx", "4xx", "5xx", "failed", "1xxx", "2xxx", "3xxx"}, Export: q.Encode()}, nil
			},
		},
		{
			Path: "/traffic/{id}", Title: "Exchange", Template: "exchange",
			Load: func(r *http.Request) (any, error) {
				id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
				if err != nil {
					return nil, ocpi.ErrNotFound
				}
				x, err := traffic.Find(r.Context(), c.cfg.DB.Read(), id, 0)
				if err != nil {
					return nil, err
				}
				return exchangeView{Exchange: *x, RequestBody: prettyBody(x.RequestBody), ResponseBody: prettyBody(x.ResponseBody)}, nil
			},
		},
		{
			Path: "/traffic/chain/{correlation_id}", Title: "Chain", Template: "traffic_chain", Refresh: 10,
			Load: func(r *http.Request) (any, error) {
				cid := r.PathValue("correlation_id")
				list, _, err := traffic.List(r.Context(), c.cfg.DB.Read(), traffic.Filter{CorrelationID: cid, Oldest: true, Limit: 200})
				if err != nil {
					return nil, err
				}
				return newChainView(cid, list), nil
			},
		},
	}, nil
}

// consoleTrafficFilter reads the page's filters; the console's keyset
// cursor ("after" the last row shown) is the list's Before.
func consoleTrafficFilter(q url.Values) (traffic.Filter, error) {
	f := traffic.Filter{Partner: q.Get("partner"), Module: q.Get("module"), CorrelationID: strings.TrimSpace(q.Get("correlation_id")),
		ObjectID: strings.TrimSpace(q.Get("object_id")), Direction: traffic.Direction(q.Get("direction")), StatusClass: q.Get("status")}
	if f.Direction != "" && f.Direction != traffic.In && f.Direction != traffic.Out {
		return f, ocpi.Invalid("direction", "must be in or out")
	}
	if !traffic.CheckStatusClass(f.StatusClass) {
		return f, ocpi.Invalid("status", "unknown status class")
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return f, ocpi.Invalid("after", "must be a non-negative integer")
		}
		f.Before = n
	}
	return f, nil
}

// newChainView lays the hops out on a time line 800 units wide, one row
// each.
func newChainView(cid string, list []traffic.Exchange) chainView {
	const width, row = 800, 28
	v := chainView{CorrelationID: cid, Width: width, Height: max(len(list), 1) * row}
	if len(list) == 0 {
		return v
	}
	start := list[0].At
	end := start
	for _, x := range list {
		if x.At.Before(start) {
			start = x.At
		}
		if e := x.At.Add(x.Duration()); e.After(end) {
			end = e
		}
	}
	span := max(end.Sub(start).Microseconds(), 1)
	for i, x := range list {
		off := x.At.Sub(start).Microseconds()
		h := chainHop{Exchange: x, Y: i * row, StartMS: millis(off),
			X: int(off * width / span), W: max(int(x.DurationUS*width/span), 2)}
		if h.X+h.W > width {
			h.X = width - h.W
		}
		v.Hops = append(v.Hops, h)
	}
	v.TotalMS = millis(span)
	return v
}

// millis writes microseconds as milliseconds with one decimal.
func millis(us int64) string {
	return strconv.FormatInt(us/1000, 10) + "." + strconv.FormatInt((us%1000)/100, 10)
}

// prettyBody indents a JSON body; other bodies are shown as they are.
func prettyBody(s string) string {
	if strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") {
		return ui.PrettyJSON([]byte(s))
	}
	return s
}

// handleTrafficExport serves the filtered list, or one chain, as a HAR file
// or JSON lines.
func (c *Console) handleTrafficExport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := consoleTrafficFilter(q)
	if err != nil {
		c.renderError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	f.Bodies, f.Limit = true, traffic.MaxLimit
	if f.CorrelationID != "" {
		f.Oldest = true
	}
	list, _, err := traffic.List(r.Context(), c.cfg.DB.Read(), f)
	if err != nil {
		c.renderError(w, r, http.StatusInternalServerError, "The traffic could not be read.")
		return
	}
	switch q.Get("format") {
	case "jsonl":
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("Content-Disposition", `attachment; filename="ocpihub-traffic.jsonl"`)
		_ = traffic.WriteJSONLines(w, list)
	default:
		w.Header().Set("Content-Type", "application/har+json")
		w.Header().Set("Content-Disposition", `attachment; filename="ocpihub-traffic.har"`)
		_ = traffic.WriteHAR(w, list, c.cfg.Version)
	}
}
