package guards

// ShapeGuess refuses a completed stamp that rests on a guess. When the
// trailing entries trimmed as notifications carried no provenance (legacy
// records), they were recognised by their text shape alone; had they been
// real prompts of that shape (#12042 shape B) the tail would be an unanswered
// prompt and the verdict interrupted. An interrupted verdict does not depend
// on the guess, so only completion is refused.
var ShapeGuess Guard[*Evidence] = Func("shape-guess", func(e *Evidence) string {
	v := e.Classification
	if !v.Guessed || v.Interrupted || v.FromTurnResult {
		return ""
	}
	return "trailing entries were trimmed as notifications by their text shape alone (no provenance); a real prompt of that shape would make the turn interrupted"
})
