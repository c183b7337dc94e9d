package events

import (
	"fmt"
	"sort"
	"sync"
)

// Registry maps codec names to codecs. The built-in codecs are registered by
// the root package (tailproof.Codecs); a harness registers its own formats the
// same way, without editing tailproof.
type Registry struct {
	mu     sync.RWMutex
	codecs map[string]Codec
}

// NewRegistry returns a registry holding codecs. Duplicate names panic: that is
// a programming error at wiring time, not an input problem.
func NewRegistry(codecs ...Codec) *Registry {
	r := &Registry{codecs: map[string]Codec{}}
	for _, c := range codecs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
	return r
}

// Register adds c; a second codec under the same name is refused.
func (r *Registry) Register(c Codec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.codecs == nil {
		r.codecs = map[string]Codec{}
	}
	if c == nil || c.Name() == "" {
		return fmt.Errorf("events: codec without a name")
	}
	if _, dup := r.codecs[c.Name()]; dup {
		return fmt.Errorf("events: codec %q already registered", c.Name())
	}
	r.codecs[c.Name()] = c
	return nil
}

// Lookup returns the codec registered under name.
func (r *Registry) Lookup(name string) (Codec, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.codecs[name]
	return c, ok
}

// Names lists the registered codec names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.codecs))
	for n := range r.codecs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
