package workflows

// CompactInput asks for the older turns of a conversation to be summarised into a summary row,
// so the model's requests stay within its context. The workflow runs it between model steps
// when a reply reported that older turns were left out.
type CompactInput struct {
	AgentID   string
	MessageID string // ID of the summary row to write; a retry with the same ID returns that row
	Seq       int64  // the row's seq in the transcript
	// Model is the provider:model whose context the window must fit ("": the agent's model,
	// else PRIMARY_MODEL). It also writes the summary.
	Model string
}

// CompactResult says what the summary covers (never its text: that is in Postgres).
type CompactResult struct {
	// Compacted is false when the newest turns already fit: no row was written and Seq is unused.
	Compacted  bool
	MessageID  string
	FromSeq    int64 // first seq summarised in this pass
	ThroughSeq int64 // the model sees rows after this seq, and the summary for those before
	Turns      int   // turns summarised in this pass
	ModelCalls int   // summarisation requests made (several when the turns exceed one request)
	Chars      int   // length of the summary
}
