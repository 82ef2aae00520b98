package netguard

import (
	"net"
	"net/http"
	"time"
)

// Transport returns an HTTP transport that dials through the guard, with
// the settings of http.DefaultTransport but no proxy (a proxy would resolve
// names where the guard cannot see the address). Each redirect hop is a new
// dial, so each is checked.
func (g *Guard) Transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = g.Dial(&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second})
	return tr
}
