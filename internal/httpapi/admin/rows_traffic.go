package admin

import (
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/traffic"
)

// trafficRows are the traffic inspector: the operator's search over every
// recorded exchange, and each partner's read-only view of its own.
func (s *handlers) trafficRows() route.Module {
	str := func(name, desc string, s openapi.Schema) openapi.Parameter {
		return openapi.Parameter{Name: name, In: "query", Description: desc, Schema: s}
	}
	filters := []openapi.Parameter{
		str("module", "only this OCPI module's exchanges", openapi.Schema{"type": "string"}),
		str("direction", "in: requests partners sent the hub; out: requests the hub sent them", openapi.Schema{"enum": []any{"in", "out"}}),
		str("status", "an HTTP class, an OCPI status_code class, or failed (no answer)",
			openapi.Schema{"enum": []any{"1xx", "2xx", "3xx", "4xx", "5xx", "1xxx", "2xxx", "3xxx", "4xxx", "failed"}}),
		str("correlation_id", "the X-Correlation-ID of a chain", openapi.Schema{"type": "string"}),
		str("object_id", "an OCPI object id the exchange involves (location, EVSE, session, CDR, token, command, payment…)", openapi.Schema{"type": "string"}),
		str("from", "exchanges that started at or after this time", openapi.Schema{"type": "string", "format": "date-time"}),
		str("to", "exchanges that started before this time", openapi.Schema{"type": "string", "format": "date-time"}),
		str("order", "newest (default, paged by before) or oldest (by start time, paged by after)", openapi.Schema{"enum": []any{"newest", "oldest"}}),
		str("before", "keyset cursor of a list newest first (the Link header's next page)", openapi.Schema{"type": "integer", "minimum": 0}),
		str("after", "keyset cursor of a list oldest first", openapi.Schema{"type": "integer", "minimum": 0}),
		str("limit", "exchanges per page", openapi.Schema{"type": "integer", "minimum": 1, "maximum": traffic.MaxLimit}),
		str("format", "json (an envelope, the default), har (an HTTP Archive 1.2 file with the bodies) or jsonl (one whole exchange a line)",
			openapi.Schema{"enum": []any{"json", "har", "jsonl"}}),
	}
	exports := map[string]openapi.Schema{"application/har+json": {"type": "object"}, "application/x-ndjson": {"type": "string"}}
	id := openapi.Parameter{Name: "id", In: "path", Description: "exchange id", Schema: openapi.Schema{"type": "integer", "minimum": 1}}
	format := str("format", "json (default), har or jsonl", openapi.Schema{"enum": []any{"json", "har", "jsonl"}})
	adminParams := append([]openapi.Parameter{
		str("partner", "only this partner's (its name)", openapi.Schema{"type": "string"}),
		str("platform_id", "only this platform's", openapi.Schema{"type": "integer", "minimum": 0}),
	}, filters...)
	rows := []route.Row{
		{Pattern: "GET /admin/traffic", Access: route.Admin, Handler: s.handleTrafficList(false), Needs: route.NeedTraffic, Doc: route.Doc{Tag: "traffic", Summary: "Search every recorded OCPI exchange, newest first (summaries; a Link header to the next page)",
			Data: []traffic.Exchange{}, Params: adminParams, Also: exports}},
		{Pattern: "GET /admin/traffic/{id}", Access: route.Admin, Handler: s.handleTrafficGet(false), Needs: route.NeedTraffic, Doc: route.Doc{Tag: "traffic", Summary: "One recorded exchange whole: headers and bodies, secrets redacted",
			Data: &traffic.Exchange{}, Params: []openapi.Parameter{id, format}, Also: exports}},
		{Pattern: "GET /ocpi/2.2.1/traffic", Access: route.Platform, Handler: s.handleTrafficList(true), Needs: route.NeedTraffic, Doc: route.Doc{Tag: "traffic", Summary: "The caller's own exchanges with the hub, newest first (never another partner's)",
			Data: []traffic.Exchange{}, Params: filters, Also: exports}},
		{Pattern: "GET /ocpi/2.2.1/traffic/{id}", Access: route.Platform, Handler: s.handleTrafficGet(true), Needs: route.NeedTraffic, Doc: route.Doc{Tag: "traffic", Summary: "One of the caller's own exchanges whole; another partner's answers 404",
			Data: &traffic.Exchange{}, Params: []openapi.Parameter{id, format}, Also: exports}},
	}
	return route.Module{
		Tag: openapi.Tag{Name: "traffic", Description: "The traffic inspector (ocpihub's own API, not an OCPI module): every OCPI exchange " +
			"the hub took part in, both ways, with secrets redacted and personal data masked."},
		Rows: rows,
		Schemas: func(s *openapi.Schemas) {
			s.Field(traffic.Exchange{}, "direction", openapi.Schema{"enum": []any{"in", "out"}})
		},
	}
}
