// Package confread reads the fields of a parsed Benthos config one after the
// other and keeps the first error, so that a plugin's constructor lists what
// it reads instead of checking an error after every field. After the first
// error, later reads leave their destination alone; Err reports it.
package confread

import (
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Reader reads fields of one namespace of a parsed config. Readers made by
// In share their parent's error.
type Reader struct {
	conf *service.ParsedConfig
	err  *error
}

// New returns a Reader of conf.
func New(conf *service.ParsedConfig) Reader {
	return Reader{conf: conf, err: new(error)}
}

// In returns a Reader of the namespace at path, sharing r's error.
func (r Reader) In(path ...string) Reader {
	return Reader{conf: r.conf.Namespace(path...), err: r.err}
}

// Err is the first error of any read so far, or nil.
func (r Reader) Err() error { return *r.err }

// Contains reports whether the field at path is set.
func (r Reader) Contains(path ...string) bool { return r.conf.Contains(path...) }

// String reads the string field at path into dst.
func (r Reader) String(dst *string, path ...string) { read(r, dst, r.conf.FieldString, path) }

// StringList reads the string list field at path into dst.
func (r Reader) StringList(dst *[]string, path ...string) { read(r, dst, r.conf.FieldStringList, path) }

// StringMap reads the string map field at path into dst.
func (r Reader) StringMap(dst *map[string]string, path ...string) {
	read(r, dst, r.conf.FieldStringMap, path)
}

// Bool reads the bool field at path into dst.
func (r Reader) Bool(dst *bool, path ...string) { read(r, dst, r.conf.FieldBool, path) }

// Int reads the int field at path into dst.
func (r Reader) Int(dst *int, path ...string) { read(r, dst, r.conf.FieldInt, path) }

// Float reads the float field at path into dst.
func (r Reader) Float(dst *float64, path ...string) { read(r, dst, r.conf.FieldFloat, path) }

// FloatList reads the float list field at path into dst.
func (r Reader) FloatList(dst *[]float64, path ...string) {
	read(r, dst, r.conf.FieldFloatList, path)
}

// Duration reads the duration field at path into dst.
func (r Reader) Duration(dst *time.Duration, path ...string) {
	read(r, dst, r.conf.FieldDuration, path)
}

func read[T any](r Reader, dst *T, field func(...string) (T, error), path []string) {
	if *r.err != nil {
		return
	}
	v, err := field(path...)
	if err != nil {
		*r.err = err
		return
	}
	*dst = v
}
