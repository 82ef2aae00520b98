package traffic

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// WriteJSONLines writes exchanges as JSON lines, one whole exchange a line.
func WriteJSONLines(w io.Writer, xs []Exchange) error {
	enc := json.NewEncoder(w)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			return err
		}
	}
	return nil
}

// WriteHAR writes exchanges as an HTTP Archive (HAR 1.2), the format
// browsers' developer tools open. version names the hub's build.
func WriteHAR(w io.Writer, xs []Exchange, version string) error {
	h := har{Log: harLog{Version: "1.2", Creator: harCreator{Name: "ocpihub", Version: version}, Entries: []harEntry{}}}
	for _, x := range xs {
		h.Log.Entries = append(h.Log.Entries, harOf(x))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(h)
}

// millis is a duration in microseconds written as milliseconds with three
// decimals (HAR times are milliseconds).
type millis int64

func (m millis) MarshalJSON() ([]byte, error) {
	us := int64(m)
	frac := strconv.FormatInt(us%1000, 10)
	for len(frac) < 3 {
		frac = "0" + frac
	}
	return []byte(strconv.FormatInt(us/1000, 10) + "." + frac), nil
}

type har struct {
	Log harLog `json:"log"`
}

type harLog struct {
	Version string     `json:"version"`
	Creator harCreator `json:"creator"`
	Entries []harEntry `json:"entries"`
}

type harCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type harEntry struct {
	StartedDateTime string      `json:"startedDateTime"`
	Time            millis      `json:"time"`
	Request         harRequest  `json:"request"`
	Response        harResponse `json:"response"`
	Cache           struct{}    `json:"cache"`
	Timings         harTimings  `json:"timings"`
	Comment         string      `json:"comment,omitempty"`
}

type harNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type harRequest struct {
	Method      string       `json:"method"`
	URL         string       `json:"url"`
	HTTPVersion string       `json:"httpVersion"`
	Cookies     []harNV      `json:"cookies"`
	Headers     []harNV      `json:"headers"`
	QueryString []harNV      `json:"queryString"`
	PostData    *harPostData `json:"postData,omitempty"`
	HeadersSize int          `json:"headersSize"`
	BodySize    int          `json:"bodySize"`
}

type harPostData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

type harResponse struct {
	Status      int        `json:"status"`
	StatusText  string     `json:"statusText"`
	HTTPVersion string     `json:"httpVersion"`
	Cookies     []harNV    `json:"cookies"`
	Headers     []harNV    `json:"headers"`
	Content     harContent `json:"content"`
	RedirectURL string     `json:"redirectURL"`
	HeadersSize int        `json:"headersSize"`
	BodySize    int        `json:"bodySize"`
}

type harContent struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text,omitempty"`
}

type harTimings struct {
	Send    int    `json:"send"`
	Wait    millis `json:"wait"`
	Receive int    `json:"receive"`
}

func harHeaders(h http.Header) []harNV {
	out := []harNV{}
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			out = append(out, harNV{Name: k, Value: v})
		}
	}
	return out
}

func harOf(x Exchange) harEntry {
	e := harEntry{StartedDateTime: x.At.Format(time.RFC3339Nano), Time: millis(x.DurationUS),
		Timings: harTimings{Send: 0, Wait: millis(x.DurationUS), Receive: 0},
		Comment: string(x.Direction) + " " + x.Partner + " correlation " + x.CorrelationID}
	e.Request = harRequest{Method: x.Method, URL: x.URL, HTTPVersion: "HTTP/1.1", Cookies: []harNV{},
		Headers: harHeaders(x.RequestHeader), QueryString: []harNV{}, HeadersSize: -1, BodySize: len(x.RequestBody)}
	if u, err := url.Parse(x.URL); err == nil {
		for k, vs := range u.Query() {
			for _, v := range vs {
				e.Request.QueryString = append(e.Request.QueryString, harNV{Name: k, Value: v})
			}
		}
	}
	if x.RequestBody != "" {
		e.Request.PostData = &harPostData{MimeType: mimeOf(x.RequestHeader), Text: x.RequestBody}
	}
	status := http.StatusText(x.HTTPStatus)
	if x.HTTPStatus == 0 {
		status = x.Error
	}
	e.Response = harResponse{Status: x.HTTPStatus, StatusText: status, HTTPVersion: "HTTP/1.1", Cookies: []harNV{},
		Headers: harHeaders(x.ResponseHeader), HeadersSize: -1, BodySize: len(x.ResponseBody),
		Content: harContent{Size: len(x.ResponseBody), MimeType: mimeOf(x.ResponseHeader), Text: x.ResponseBody}}
	return e
}

func mimeOf(h http.Header) string {
	if ct := h.Get("Content-Type"); ct != "" {
		return ct
	}
	return "application/json"
}
