package simwire_test

import (
	"context"
	"testing"

	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// TestGate: an open gate lets a request pass at once; a shut one holds it
// until it opens, or until the request's context ends.
func TestGate(t *testing.T) {
	t.Parallel()
	var g simwire.Gate
	if !simwire.Pass(context.Background(), g.Held()) {
		t.Fatal("an open gate held a request")
	}
	g.Shut(true)
	held := g.Held()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if simwire.Pass(ended, held) {
		t.Fatal("a shut gate let a request whose context ended pass")
	}
	passed := make(chan bool)
	go func() { passed <- simwire.Pass(context.Background(), held) }()
	g.Shut(false)
	if !<-passed {
		t.Fatal("opening the gate did not let the held request go")
	}
}
