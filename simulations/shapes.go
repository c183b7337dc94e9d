package simulations

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// RecordShape is one kind of transcript record as a writer wrote it: its
// type, its subtype ("" when absent), and its sorted field set. Fields are
// the top-level keys, plus "key.sub" for the keys of the object-valued
// fields whose members say what a record proves (systemPayload,
// backgroundTurn, toolCallResult, goalContext). Values are left out: a
// differential against the real writer compares shapes, not contents.
type RecordShape struct {
	Type    string   `json:"type"`
	Subtype string   `json:"subtype,omitempty"`
	Fields  []string `json:"fields"`
}

// String is the shape's one-line form: type[/subtype] {field, field…}.
func (s RecordShape) String() string {
	t := s.Type
	if s.Subtype != "" {
		t += "/" + s.Subtype
	}
	return t + " {" + strings.Join(s.Fields, ", ") + "}"
}

// nestedShapeFields are the object fields whose keys are part of a shape.
var nestedShapeFields = []string{"systemPayload", "backgroundTurn", "toolCallResult", "goalContext"}

// ShapeOf returns the shape of one transcript line (a JSON object).
func ShapeOf(line []byte) (RecordShape, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return RecordShape{}, fmt.Errorf("simulations: shape of %.60q: %w", line, err)
	}
	var s RecordShape
	_ = json.Unmarshal(obj["type"], &s.Type)
	_ = json.Unmarshal(obj["subtype"], &s.Subtype)
	for k, v := range obj {
		s.Fields = append(s.Fields, k)
		if !slices.Contains(nestedShapeFields, k) {
			continue
		}
		var sub map[string]json.RawMessage
		if json.Unmarshal(v, &sub) == nil {
			for sk := range sub {
				s.Fields = append(s.Fields, k+"."+sk)
			}
		}
	}
	slices.Sort(s.Fields)
	return s, nil
}

// ModelShapes runs the first runs model runs of seed whose daemon version is
// named version ("" for every version) to their end, without crashes, and
// returns every distinct record shape they wrote, sorted by their String
// form. It is the simulator's side of a differential against the real
// writer: a shape listed here that the real daemon never writes is a model
// error.
func ModelShapes(ctx context.Context, seed uint64, runs int, version string) ([]RecordShape, error) {
	seen := map[string]RecordShape{}
	for run := 0; run < runs && ctx.Err() == nil; run++ {
		src := modelRand(seed, run)
		n := src.IntN(40) + 8 // runLen's draw
		prof, ver := runClass(run)
		if version != "" && ver.Name != version {
			continue
		}
		d := NewDaemon(ctx, src, prof, ver)
		d.shapes = seen
		for j := 0; j < n && len(d.violations) == 0; j++ {
			d.act(d.choose())
		}
		if d.shapeErr != nil {
			return nil, d.shapeErr
		}
		if len(d.violations) > 0 {
			return nil, fmt.Errorf("simulations: model run %d of seed %d: %s", run, seed, d.violations[0])
		}
	}
	out := make([]RecordShape, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b RecordShape) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// noteShape records the shape of the line just written (ModelShapes only).
func (d *Daemon) noteShape(line []byte) {
	if d.shapes == nil || d.shapeErr != nil {
		return
	}
	s, err := ShapeOf(line)
	if err != nil {
		d.shapeErr = err
		return
	}
	d.shapes[s.String()] = s
}
