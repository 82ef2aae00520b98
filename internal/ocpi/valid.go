package ocpi

// Checkable is an OCPI object that checks its own fields (Check).
type Checkable interface{ Check(c *Check) }

// DecodeValid decodes raw into v (a pointer to the object) and checks it:
// a body that does not parse, or an object whose fields break the spec,
// is the error, naming the field.
func DecodeValid(raw []byte, v Checkable) error {
	if err := Decode(raw, v); err != nil {
		return err
	}
	c := NewCheck("")
	v.Check(c)
	return c.Err()
}
