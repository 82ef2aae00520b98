package hub

// CollapseFields and Covers expose the collapse rules to the table tests.
var (
	CollapseFields = collapseFields
	Covers         = covers
)
