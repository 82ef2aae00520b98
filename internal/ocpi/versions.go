package ocpi

// Version is one entry of the versions list.
type Version struct {
	Version string `json:"version"`
	URL     string `json:"url"`
}

// VersionDetails lists a version's endpoints.
type VersionDetails struct {
	Version   string     `json:"version"`
	Endpoints []Endpoint `json:"endpoints"`
}

// Endpoint is one module endpoint. Role is SENDER or RECEIVER (absent in
// 2.1.1).
type Endpoint struct {
	Identifier string `json:"identifier"`
	Role       string `json:"role,omitempty"`
	URL        string `json:"url"`
}

// Interface roles.
const (
	InterfaceSender   = "SENDER"
	InterfaceReceiver = "RECEIVER"
)

// Find returns the URL of module identifier with interface role (role "" or a
// 2.1.1 endpoint without role match any).
func (d VersionDetails) Find(identifier, role string) (string, bool) {
	for _, e := range d.Endpoints {
		if e.Identifier == identifier && (role == "" || e.Role == "" || e.Role == role) {
			return e.URL, true
		}
	}
	return "", false
}
