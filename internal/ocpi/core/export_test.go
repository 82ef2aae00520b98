package core

// For the external tests: Canonical's two ways.
var (
	CanonicalOver  = canonicalOver
	CanonicalTrees = canonicalTrees
)
