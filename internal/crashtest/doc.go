// Package crashtest kills the real ocpihub binary at chosen points and
// checks what survives. Its tests build cmd/ocpihub once per test binary,
// run it as a subprocess on SQLite and on PostgreSQL with simulated
// partners (internal/sim) on loopback, send it SIGKILL mid-flight, start
// it again on the same database and address, and check the end state:
// every receiver converges to the latest state, and the time from the
// restart to convergence is printed and bounded.
//
// The outage tests (outage_test.go) take PostgreSQL away from a running
// binary instead: its connections go through a TCP relay the test cuts for
// ten seconds, and the hub must stay up, acknowledge nothing it could not
// store, and carry on by itself when the database is back.
//
// The package holds no product code; everything is in its tests, so
// `go test ./...` (and CI) runs it.
package crashtest
