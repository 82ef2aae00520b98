package core

// OCPI status codes (transport.md §7).
const (
	StatusSuccess             = 1000
	StatusClientError         = 2000
	StatusInvalidParams       = 2001
	StatusNotEnoughInfo       = 2002
	StatusUnknownLocation     = 2003
	StatusUnknownToken        = 2004
	StatusServerError         = 3000
	StatusClientAPIError      = 3001
	StatusUnsupportedVersion  = 3002
	StatusNoMatchingEndpoints = 3003
	StatusHubError            = 4000
	StatusUnknownReceiver     = 4001
	StatusTimeout             = 4002
	StatusNotConnected        = 4003
)

// StatusText returns a short message for an OCPI status code.
func StatusText(code int) string {
	switch code {
	case StatusSuccess:
		return "Success"
	case StatusClientError:
		return "Generic client error"
	case StatusInvalidParams:
		return "Invalid or missing parameters"
	case StatusNotEnoughInfo:
		return "Not enough information"
	case StatusUnknownLocation:
		return "Unknown Location"
	case StatusUnknownToken:
		return "Unknown Token"
	case StatusServerError:
		return "Generic server error"
	case StatusClientAPIError:
		return "Unable to use the client's API"
	case StatusUnsupportedVersion:
		return "Unsupported version"
	case StatusNoMatchingEndpoints:
		return "No matching endpoints or expected endpoints missing between parties"
	case StatusHubError:
		return "Generic hub error"
	case StatusUnknownReceiver:
		return "Unknown receiver"
	case StatusTimeout:
		return "Timeout on forwarded request"
	case StatusNotConnected:
		return "Connection problem: receiving party is not connected"
	}
	switch {
	case code >= 1000 && code < 2000:
		return "Success"
	case code >= 2000 && code < 3000:
		return "Client error"
	case code >= 3000 && code < 4000:
		return "Server error"
	case code >= 4000 && code < 5000:
		return "Hub error"
	}
	return "Unknown status"
}

// IsSuccess reports whether an OCPI status code means success (1xxx).
func IsSuccess(code int) bool { return code >= 1000 && code < 2000 }
