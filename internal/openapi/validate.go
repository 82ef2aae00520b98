package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ErrUndocumented is returned by Validator.Check for a request no operation
// of the document matches.
var ErrUndocumented = errors.New("no operation of the OpenAPI document matches")

// docURL is where the document is registered with the schema compiler: a
// reserved domain, so no reference ever resolves to the network.
const docURL = "https://ocpihub.invalid/openapi.json"

// Validator checks HTTP exchanges against a document. The document is
// compiled once; response schemas are compiled on first use and kept.
type Validator struct {
	doc      *Document
	mux      *http.ServeMux
	compiler *jsonschema.Compiler

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

// route is what the validator's mux finds for a request.
type route struct{ method, path string }

func (route) ServeHTTP(http.ResponseWriter, *http.Request) {}

// NewValidator compiles d. It fails when a schema of d is not valid JSON
// Schema 2020-12 or a reference does not resolve.
func NewValidator(d *Document) (*Validator, error) {
	raw, err := d.JSON()
	if err != nil {
		return nil, err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, v); err != nil {
		return nil, err
	}
	val := &Validator{doc: d, mux: http.NewServeMux(), compiler: c, compiled: map[string]*jsonschema.Schema{}}
	var errs []error
	d.Each(func(method, path string, op *Operation) {
		val.mux.Handle(method+" "+path, route{method, path})
		for status, resp := range op.Responses {
			for mt := range resp.Content {
				if _, err := val.schema(method, path, status, mt); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if op.RequestBody != nil {
			for mt := range op.RequestBody.Content {
				ptr := "/paths/" + escape(path) + "/" + strings.ToLower(method) + "/requestBody/content/" + escape(mt) + "/schema"
				if _, err := val.compile(ptr); err != nil {
					errs = append(errs, fmt.Errorf("%s %s request body: %w", method, path, err))
				}
			}
		}
	})
	for name := range d.Components.Schemas {
		if _, err := val.compile("/components/schemas/" + escape(name)); err != nil {
			errs = append(errs, fmt.Errorf("component %s: %w", name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return val, nil
}

// Find returns the operation serving method and path (a request path, not a
// template), and its path template.
func (v *Validator) Find(method, path string) (op *Operation, template string, ok bool) {
	req, err := http.NewRequest(method, "http://hub.invalid"+path, nil)
	if err != nil {
		return nil, "", false
	}
	h, pattern := v.mux.Handler(req)
	r, isRoute := h.(route)
	if pattern == "" || !isRoute {
		return nil, "", false
	}
	op, ok = v.doc.Operation(r.method, r.path)
	return op, r.path, ok
}

// Check validates one answer: the operation must declare its status (or a
// default), the body's media type must be one the response declares, and the
// body must match that media type's schema. HEAD requests are checked as
// GET without a body.
func (v *Validator) Check(method, path string, status int, header http.Header, body []byte) error {
	head := method == http.MethodHead
	if head {
		method = http.MethodGet
	}
	op, tmpl, ok := v.Find(method, path)
	if !ok {
		return ErrUndocumented
	}
	code := strconv.Itoa(status)
	resp, ok := op.Responses[code]
	if !ok {
		if resp, ok = op.Responses["default"]; !ok {
			return fmt.Errorf("%s %s: HTTP %d is not a declared response of %s %s (declared: %s)", method, path, status, method, tmpl, declared(op))
		}
		code = "default"
	}
	if head || len(resp.Content) == 0 {
		if len(resp.Content) == 0 && len(bytes.TrimSpace(body)) > 0 && !head {
			return fmt.Errorf("%s %s: HTTP %d declares no body, got %s", method, path, status, clip(body))
		}
		return nil
	}
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	if _, ok := resp.Content[mt]; !ok {
		return fmt.Errorf("%s %s: HTTP %d answered %q, declared %s", method, path, status, header.Get("Content-Type"), mediaTypes(resp))
	}
	if !strings.HasSuffix(mt, "json") || strings.HasSuffix(mt, "ndjson") {
		// JSON lines are many documents, not one.
		return nil
	}
	sch, err := v.schema(method, tmpl, code, mt)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: HTTP %d body is not JSON: %v: %s", method, path, status, err, clip(body))
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s %s: HTTP %d body does not match the response schema of %s %s: %s\nbody: %s", method, path, status, method, tmpl, leafErrors(err), clip(body))
	}
	return nil
}

// ValidateSchema checks a JSON body against a component schema.
func (v *Validator) ValidateSchema(component string, body []byte) error {
	sch, err := v.compile("/components/schemas/" + escape(component))
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return errors.New(leafErrors(err))
	}
	return nil
}

func (v *Validator) schema(method, path, status, mt string) (*jsonschema.Schema, error) {
	ptr := "/paths/" + escape(path) + "/" + strings.ToLower(method) + "/responses/" + escape(status) + "/content/" + escape(mt) + "/schema"
	sch, err := v.compile(ptr)
	if err != nil {
		return nil, fmt.Errorf("%s %s HTTP %s %s: %w", method, path, status, mt, err)
	}
	return sch, nil
}

func (v *Validator) compile(ptr string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if sch, ok := v.compiled[ptr]; ok {
		return sch, nil
	}
	sch, err := v.compiler.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, err
	}
	v.compiled[ptr] = sch
	return sch, nil
}

// escape makes s one JSON pointer token inside a URI fragment.
func escape(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
	return url.PathEscape(s)
}

func declared(op *Operation) string {
	return strings.Join(slices.Sorted(maps.Keys(op.Responses)), ", ")
}

func mediaTypes(r *Response) string {
	return strings.Join(slices.Sorted(maps.Keys(r.Content)), ", ")
}

// leafErrors lists the innermost failures of a validation error, each with
// the instance location. Of the branches of a failed anyOf or oneOf, only the
// one with the fewest failures (then the deepest) is reported (a success envelope
// with bad data is not also told it lacks an error object).
func leafErrors(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			if len(e.Causes) > 1 {
				best := e.Causes[0]
				for _, c := range e.Causes[1:] {
					if n, bn := leaves(c), leaves(best); n < bn || (n == bn && depth(c) > depth(best)) {
						best = c
					}
				}
				walk(best)
				return
			}
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		line := "/" + strings.Join(e.InstanceLocation, "/") + ": " + e.ErrorKind.LocalizedString(printer)
		if !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	walk(ve)
	return strings.Join(lines, "; ")
}

// leaves counts the innermost failures of e.
func leaves(e *jsonschema.ValidationError) int {
	if len(e.Causes) == 0 {
		return 1
	}
	n := 0
	for _, c := range e.Causes {
		n += leaves(c)
	}
	return n
}

// depth is how deep into the instance the failures of e lie.
func depth(e *jsonschema.ValidationError) int {
	d := len(e.InstanceLocation)
	for _, c := range e.Causes {
		d = max(d, depth(c))
	}
	return d
}

var printer = message.NewPrinter(language.English)

func clip(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}
