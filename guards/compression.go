package guards

// CompressionCheckpoint vetoes when a chat_compression record carrying a
// compressedHistory was written after admission (reference V8): the history
// projection was swapped for the compressed snapshot and no longer holds the
// target's turn. "After admission" is by position when the admission has a
// marker (a backward clock step cannot hide the reset) and by clock otherwise.
var CompressionCheckpoint Guard[*Evidence] = Func("compression-checkpoint", func(e *Evidence) string {
	if e.Transcript.CompressedAfter {
		return "history was compressed after admission (record " + e.Transcript.CompressionUUID + ")"
	}
	return ""
})
