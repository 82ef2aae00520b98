package v211

import (
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Encode writes a legacy object (a 2.1.1 type from this package, or a
// generic PATCH object) of module at level (locations only) in version v's
// wire form.
func Encode(v, module, level string, obj any) ([]byte, error) {
	b, err := Marshal(obj)
	if err != nil || v != V20 {
		return b, err
	}
	o, err := ocpi.ParseObject(b)
	if err != nil {
		return nil, err
	}
	To20(module, level, o)
	return Marshal(o)
}

// Decode reads a legacy body of module at level (locations only) sent in
// version v into out (a 2.1.1 type of this package, or an ocpi.Object for a
// PATCH). A body that is not JSON is EINVALIDJSON; JSON of the wrong shape is
// EINVALID naming the field.
func Decode(v, module, level string, raw []byte, now time.Time, out any) error {
	if v == V20 {
		o, err := ocpi.ParseObject(raw)
		if err != nil {
			if perr := ocpi.Decode(raw, &struct{}{}); perr != nil {
				return perr
			}
			return err
		}
		From20(module, level, o, now)
		if raw, err = Marshal(o); err != nil {
			return err
		}
	}
	if o, ok := out.(*ocpi.Object); ok {
		if err := ocpi.Decode(raw, &struct{}{}); err != nil {
			return err
		}
		p, err := ocpi.ParseObject(raw)
		if err != nil {
			return err
		}
		*o = p
		return nil
	}
	return ocpi.Decode(raw, out)
}
