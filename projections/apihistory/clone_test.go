package apihistory

import (
	"reflect"
	"testing"
)

// TestCloneCoversEveryField fails when Fold (or fpCounts) gains a field
// that holds memory a fold writes to — a map, slice or pointer — that Clone
// was not taught to copy: a clone sharing it would change with the fold it
// was taken from.
func TestCloneCoversEveryField(t *testing.T) {
	handled := map[string]bool{
		// copied or clipped by Clone
		"win": true, "base": true, "ids": true, "idsShown": true, "completed": true, "tags": true,
		"prompts": true, "daemons": true, "outcomes": true, "fp": true,
		// read only once set: a record, and fpCounts' hash function
		"lastMaterial": true, "hash": true,
		// fpCounts, copied by clone
		"ring": true, "table": true, "old": true,
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Fold](), reflect.TypeFor[fpCounts]()} {
		for i := range typ.NumField() {
			fl := typ.Field(i)
			switch fl.Type.Kind() {
			case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Func, reflect.Array, reflect.Struct, reflect.Interface:
				if fl.Type.Kind() == reflect.Struct && plain(fl.Type) || fl.Type.Kind() == reflect.Array && plain(fl.Type.Elem()) {
					continue
				}
				if !handled[fl.Name] {
					t.Errorf("%s.%s (%s) is not copied by Clone", typ.Name(), fl.Name, fl.Type)
				}
			}
		}
	}
}

// plain: a value type with nothing a fold could write through.
func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Func, reflect.Interface, reflect.Chan, reflect.UnsafePointer:
		return false
	case reflect.Array:
		return plain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plain(t.Field(i).Type) {
				return false
			}
		}
	}
	return true
}
