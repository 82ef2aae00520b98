package ocpi

import (
	"net/http"
	"net/url"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi/core"
)

// The OCPI core (package core: envelope, status codes, errors, DateTime,
// numbers, paging, the staleness rule, PATCH merge, typed decoding) under the
// names the modules and the rest of the hub use: aliases and one-line
// forwards, so ocpi.Number is core.Number and every caller stays as it was.

type (
	DateTime     = core.DateTime
	Object       = core.Object
	Response     = core.Response
	ErrorDetail  = core.ErrorDetail
	ErrorDetails = core.ErrorDetails
	Envelope     = core.Envelope
	Error        = core.Error
	Number       = core.Number
	DisplayText  = core.DisplayText
	Price        = core.Price
	PageRequest  = core.PageRequest
	Cursor       = core.Cursor
	Page         = core.Page
	StaleError   = core.StaleError
)

const (
	EINVALIDJSON              = core.EINVALIDJSON
	EUNAUTHORIZED             = core.EUNAUTHORIZED
	ENOTFOUND                 = core.ENOTFOUND
	EUNKNOWNLOCATION          = core.EUNKNOWNLOCATION
	EUNKNOWNTOKEN             = core.EUNKNOWNTOKEN
	EINVALID                  = core.EINVALID
	ENOTENOUGHINFO            = core.ENOTENOUGHINFO
	ECONFLICT                 = core.ECONFLICT
	EUNPROCESSABLE            = core.EUNPROCESSABLE
	EMETHOD                   = core.EMETHOD
	ETOOLARGE                 = core.ETOOLARGE
	ERATELIMIT                = core.ERATELIMIT
	ECLIENTAPI                = core.ECLIENTAPI
	EUNSUPPORTEDVER           = core.EUNSUPPORTEDVER
	ENOENDPOINTS              = core.ENOENDPOINTS
	EHUB                      = core.EHUB
	EUNKNOWNRECEIVER          = core.EUNKNOWNRECEIVER
	ETIMEOUT                  = core.ETIMEOUT
	ENOTCONNECTED             = core.ENOTCONNECTED
	EINTERNAL                 = core.EINTERNAL
	EUNAVAILABLE              = core.EUNAVAILABLE
	EUNSUPPORTEDMEDIUM        = core.EUNSUPPORTEDMEDIUM
	DefaultLimit              = core.DefaultLimit
	MaxLimit                  = core.MaxLimit
	ESTALE                    = core.ESTALE
	StatusSuccess             = core.StatusSuccess
	StatusClientError         = core.StatusClientError
	StatusInvalidParams       = core.StatusInvalidParams
	StatusNotEnoughInfo       = core.StatusNotEnoughInfo
	StatusUnknownLocation     = core.StatusUnknownLocation
	StatusUnknownToken        = core.StatusUnknownToken
	StatusServerError         = core.StatusServerError
	StatusClientAPIError      = core.StatusClientAPIError
	StatusUnsupportedVersion  = core.StatusUnsupportedVersion
	StatusNoMatchingEndpoints = core.StatusNoMatchingEndpoints
	StatusHubError            = core.StatusHubError
	StatusUnknownReceiver     = core.StatusUnknownReceiver
	StatusTimeout             = core.StatusTimeout
	StatusNotConnected        = core.StatusNotConnected
)

var (
	ErrNotFound = core.ErrNotFound
)

func EqualCI(a, b string) bool { return core.EqualCI(a, b) }

func Key(s string) string { return core.Key(s) }

func NewDateTime(t time.Time) DateTime { return core.NewDateTime(t) }

func ParseDateTime(s string) (DateTime, error) { return core.ParseDateTime(s) }

func FromMicros(us int64) DateTime { return core.FromMicros(us) }

func Decode(raw []byte, v any) error { return core.Decode(raw, v) }

func Canonical(raw []byte, typed any) ([]byte, error) { return core.Canonical(raw, typed) }

func ParseObject(b []byte) (Object, error) { return core.ParseObject(b) }

func MarshalObject(o any) ([]byte, error) { return core.MarshalObject(o) }

// DecodeChecked is how a received object becomes the body the hub stores:
// raw decoded into typed, typed checked by check, and the canonical form of
// the two (Canonical).
func DecodeChecked(raw []byte, typed any, check func() error) ([]byte, error) {
	if err := core.Decode(raw, typed); err != nil {
		return nil, err
	}
	if err := check(); err != nil {
		return nil, err
	}
	return core.Canonical(raw, typed)
}

// ParseStored reads the body of a stored row as a generic object and its
// canonical form: the database's rendering (PostgreSQL's JSONB has its own
// spacing and key order) is not what a new body should be compared with.
func ParseStored(body []byte) (doc Object, canon []byte, err error) {
	if doc, err = core.ParseObject(body); err != nil {
		return nil, nil, err
	}
	if canon, err = core.MarshalObject(doc); err != nil {
		return nil, nil, err
	}
	return doc, canon, nil
}

func CanonicalPatch(patch Object) ([]byte, error) { return core.CanonicalPatch(patch) }

func Success(data any, now time.Time) Response { return core.Success(data, now) }

func ErrorResponse(err error, now time.Time) (int, Response) { return core.ErrorResponse(err, now) }

func DecodeEnvelope(body []byte) (*Envelope, error) { return core.DecodeEnvelope(body) }

func Errorf(code, format string, args ...any) *Error { return core.Errorf(code, format, args...) }

func Invalid(field, issue string) *Error { return core.Invalid(field, issue) }

func IsNotFound(err error) bool { return core.IsNotFound(err) }

func ErrorCode(err error) string { return core.ErrorCode(err) }

func HTTPStatusOf(err error) (httpStatus, statusCode int) { return core.HTTPStatusOf(err) }

func NewNumber(s string) Number { return core.NewNumber(s) }

func ParseNumber(s string) (Number, error) { return core.ParseNumber(s) }

func NumberFromInt(n int64) Number { return core.NumberFromInt(n) }

func NumberFromDecimal(d decimal.Decimal) Number { return core.NumberFromDecimal(d) }

func ParseCursor(s string) (*Cursor, error) { return core.ParseCursor(s) }

func ParsePageRequest(q url.Values, maxLimit int) (PageRequest, error) {
	return core.ParsePageRequest(q, maxLimit)
}

func SetPageHeaders(h http.Header, self *url.URL, req PageRequest, page Page, maxLimit int, returned int) {
	core.SetPageHeaders(h, self, req, page, maxLimit, returned)
}

func NextLink(h http.Header) string { return core.NextLink(h) }

func MergePatch(dst, patch Object) { core.MergePatch(dst, patch) }

func ApplyPatch(doc, patch Object, v any) ([]byte, error) { return core.ApplyPatch(doc, patch, v) }

func PatchIdentity(patch Object, key map[string]string) error { return core.PatchIdentity(patch, key) }

func ParsePatch(raw []byte, partial any, lastUpdated *DateTime) (Object, error) {
	return core.ParsePatch(raw, partial, lastUpdated)
}

func CheckFresh(module, object string, stored, sent DateTime) error {
	return core.CheckFresh(module, object, stored, sent)
}

func CheckFreshText(module, object, stored, sent string) error {
	return core.CheckFreshText(module, object, stored, sent)
}

func SameInstant(a, b DateTime) bool { return core.SameInstant(a, b) }

func AsStale(err error) *StaleError { return core.AsStale(err) }

func LastUpdatedOf(body []byte) DateTime { return core.LastUpdatedOf(body) }

func StatusText(code int) string { return core.StatusText(code) }

func IsSuccess(code int) bool { return core.IsSuccess(code) }
