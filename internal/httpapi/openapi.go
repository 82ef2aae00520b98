package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/ocpihub/ocpihub/internal/httpapi/apidoc"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
)

// fallbacks are the patterns without a method that answer paths no route
// matches; they are not operations.
var fallbacks = []string{"/ocpi/", "/admin/", "/api/"}

// IsFallback reports whether a route pattern is one of the no-route
// fallbacks (not an operation).
func IsFallback(pattern string) bool { return slices.Contains(fallbacks, pattern) }

// OpenAPI returns the OpenAPI 3.1 document of the route table: every
// documented route, its parameters, request body and answers.
func (s *Server) OpenAPI() *openapi.Document {
	d := openapi.New(openapi.Info{
		Title:   "ocpihub",
		Version: s.cfg.Version,
		Description: "OCPI 2.2.1 roaming hub and eMSP. Every answer under /ocpi and /admin is an OCPI envelope " +
			"(status_code, status_message, timestamp, data or error). Partners authenticate with " +
			"`Authorization: Token <base64 of their credentials token>` (raw tokens are accepted too); the operator " +
			"with the admin token. X-Request-ID and X-Correlation-ID are echoed (generated when missing).",
	})
	if d.Info.Version == "" {
		d.Info.Version = "dev"
	}
	d.Servers = []openapi.Server{{URL: s.kit.PublicURL("")}}
	d.Components.SecuritySchemes = map[string]openapi.SecurityScheme{
		"ocpiToken": {Type: "apiKey", In: "header", Name: "Authorization",
			Description: "`Token <base64(token)>`: a partner's credentials token C; token A (registration) on versions and credentials only."},
		"adminToken": {Type: "apiKey", In: "header", Name: "Authorization",
			Description: "`Token <admin token>` (raw or Base64): the operator's token."},
	}
	sch := openapi.NewSchemas()
	sch.Type(ocpi.DateTime{}, openapi.Schema{"type": "string", "format": "date-time"})
	sch.Type(ocpi.Number{}, openapi.Schema{"type": "number"})
	apidoc.DefineEnvelope(sch)

	var tags []openapi.Tag
	for _, m := range s.modules() {
		if m.Schemas != nil {
			m.Schemas(sch)
		}
		if m.Tag.Name != "" {
			tags = append(tags, m.Tag)
		}
	}
	for _, r := range s.routeList {
		method, path, hasMethod := strings.Cut(r.Pattern, " ")
		if !hasMethod {
			continue
		}
		d.Add(method, apidoc.Template(path), apidoc.Operation(sch, method, path, r.Access.String(), r.Doc))
	}
	d.Tags = tags
	d.Components.Schemas = sch.Components()
	return d
}

// handleOpenAPI serves the document, built once.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	s.apiDocOnce.Do(func() {
		b, err := s.OpenAPI().JSON()
		if err != nil {
			s.logger.Error("OpenAPI document", "error", err)
			return
		}
		s.apiDoc = b
	})
	if s.apiDoc == nil {
		http.Error(w, "the OpenAPI document could not be built", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(s.apiDoc)
}

// apiDocCache holds the served document.
type apiDocCache struct {
	apiDocOnce sync.Once
	apiDoc     []byte
}
