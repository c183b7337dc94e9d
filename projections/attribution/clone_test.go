package attribution

import (
	"reflect"
	"slices"
	"testing"
)

// TestCloneCoversEveryField fails when Fold or Neutral gains a map, slice
// or pointer anywhere in its fields that Clone was not taught about: a
// clone sharing it would change with the fold it was taken from.
func TestCloneCoversEveryField(t *testing.T) {
	known := []string{
		// copied by Clone
		"Fold.absence.named", "Fold.absence.calls",
		"Neutral.fold", "Neutral.ids", "Neutral.uuids", "Neutral.prompt",
		// never written through once set: the turn's saved fold, a record,
		// and evidence slices only the reconcile core fills
		"Fold.saved", "Fold.lastNS", "Fold.ev.BadLines",
	}
	var got []string
	var walk func(path string, t reflect.Type)
	walk = func(path string, t reflect.Type) {
		for i := range t.NumField() {
			fl := t.Field(i)
			p := path + "." + fl.Name
			switch fl.Type.Kind() {
			case reflect.Struct:
				walk(p, fl.Type)
			case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Func, reflect.Interface, reflect.Chan:
				got = append(got, p)
			}
		}
	}
	walk("Fold", reflect.TypeFor[Fold]())
	walk("Neutral", reflect.TypeFor[Neutral]())
	for _, p := range got {
		if !slices.Contains(known, p) {
			t.Errorf("%s is not covered by Clone", p)
		}
	}
}
