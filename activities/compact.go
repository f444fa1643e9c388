package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
	window "github.com/sapagent/sapagent/internal/transcript"
	"github.com/sapagent/sapagent/workflows"
)

// windowRows bounds the rows a model request reads after the latest summary; compaction keeps
// far fewer than this after the summary, so the bound only matters before the first compaction
// of a conversation that predates summaries.
const windowRows = 1000

// compactRows bounds the rows one compaction reads. A conversation that predates summaries has
// its newest rows summarised; rows older than those are covered without being read.
const compactRows = 2000

// summaryPrompt asks for the summary that stands for older turns (the offline model recognises
// "conversation summary").
const summaryPrompt = "Write the conversation summary that replaces the older turns of a conversation between a user " +
	"and sapagent, an assistant for SAP landscapes. From now on the assistant sees only this summary and the newest turns. " +
	"Keep what the user wants and decided; the SAP systems, connections, tables, objects and values that matter; results " +
	"of tool calls later turns rely on; open questions and pending work. Drop greetings and repetition. Extend the previous " +
	"summary, if there is one, with the new turns. Write plain prose of at most %d words and reply with the summary only."

// Headers of the summarisation request's user message (the offline model reads them).
const (
	summaryPreviousHeader = "Previous summary:"
	summaryTurnsHeader    = "Turns to summarise:"
)

// contextWindow builds a model request's messages for an agent: the system prompt with the
// latest summary, then the newest whole turns after the summary that fit the model's budget
// (stored tool outputs expanded). Result.Omitted tells the caller compaction is due.
func (a *Activities) contextWindow(ctx context.Context, agentID, workspaceID uuid.UUID, system string, tools []openai.Tool, modelRef string) (window.Result, error) {
	summary, covered, err := a.latestSummary(ctx, agentID)
	if err != nil {
		return window.Result{}, err
	}
	rows, err := a.Store.ListRecentMessagesAfter(ctx, agentID, covered, windowRows)
	if err != nil {
		return window.Result{}, fmt.Errorf("load transcript: %w", err)
	}
	if err := a.expandStoredOutputs(ctx, agentID, rows); err != nil {
		return window.Result{}, fmt.Errorf("load tool outputs: %w", err)
	}
	images, err := a.inlineAttachments(ctx, workspaceID, rows)
	if err != nil {
		return window.Result{}, err
	}
	res := window.Build(window.Request{
		System: system, Summary: summary, CoveredThrough: covered, History: rows,
		Earlier: len(rows) == windowRows && rows[0].Seq > covered+1,
		Budget:  window.RequestBudget(a.Models.ContextTokens(modelRef)), ToolTokens: window.ToolsTokens(tools),
	})
	var userSeqs []int64
	for _, m := range rows {
		if m.Role == "user" && m.Seq > covered {
			userSeqs = append(userSeqs, m.Seq)
		}
	}
	if err := a.attachImages(ctx, res.Messages, userSeqs, images); err != nil {
		return window.Result{}, err
	}
	return res, nil
}

// latestSummary returns the newest summary's text and the last seq it covers ("", 0: none).
func (a *Activities) latestSummary(ctx context.Context, agentID uuid.UUID) (string, int64, error) {
	s, err := a.Store.LatestSummary(ctx, agentID)
	if errors.Is(err, store.ErrNotFound) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("load summary: %w", err)
	}
	c, _ := s.Coverage()
	return s.Content, c.ThroughSeq, nil
}

// CompactConversation summarises the turns that no longer fit the model's window (after the
// latest summary) together with that summary, stores the result as a summary row at in.Seq,
// and publishes it as a message. It keeps the newest turns that fill half of what the budget
// leaves, so the window grows for a few turns before the next compaction. Turns too large for
// one summarisation request are summarised in chunks, each extending the summary so far.
func (a *Activities) CompactConversation(ctx context.Context, in workflows.CompactInput) (workflows.CompactResult, error) {
	agentID, err := parseAgentID(in.AgentID)
	if err != nil {
		return workflows.CompactResult{}, err
	}
	msgID, err := uuid.Parse(in.MessageID)
	if err != nil {
		return workflows.CompactResult{}, badInput("bad message id", err)
	}
	// A retry after the row was stored returns it: the model is not asked twice.
	if done, err := a.Store.GetMessage(ctx, agentID, msgID); err == nil {
		return compactResult(done), nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return workflows.CompactResult{}, fmt.Errorf("load summary row: %w", err)
	}
	agent, err := a.Store.GetAgent(ctx, agentID)
	if err != nil {
		return workflows.CompactResult{}, fmt.Errorf("load agent: %w", err)
	}
	ref := firstNonEmpty(in.Model, agent.Model, a.PrimaryModel)
	client, model, err := a.Models.Client(ref)
	if err != nil {
		return workflows.CompactResult{}, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrTypeModelRejected, nil)
	}
	conns, err := a.Store.ListConnections(ctx, agent.WorkspaceID)
	if err != nil {
		return workflows.CompactResult{}, fmt.Errorf("load connections: %w", err)
	}
	previous, covered, err := a.latestSummary(ctx, agentID)
	if err != nil {
		return workflows.CompactResult{}, err
	}
	rows, err := a.Store.ListRecentMessagesAfter(ctx, agentID, covered, compactRows)
	if err != nil {
		return workflows.CompactResult{}, fmt.Errorf("load transcript: %w", err)
	}
	for len(rows) > 0 && rows[len(rows)-1].Seq >= in.Seq {
		rows = rows[:len(rows)-1] // only what precedes the summary's place
	}

	budget := window.RequestBudget(a.Models.ContextTokens(ref))
	system := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: a.systemPrompt(ctx, agent.WorkspaceID, conns)}}
	fixed := window.MessagesTokens(system) + window.ToolsTokens(a.modelTools(len(conns)))
	plan := window.Plan(rows, covered, window.KeepTokens(budget, fixed))
	if len(plan.Older) == 0 {
		return workflows.CompactResult{}, nil
	}

	maxSummary := window.MaxSummaryTokens(budget)
	prompt := fmt.Sprintf(summaryPrompt, maxSummary*3/4) // about 0.75 words per token
	turns := make([]string, len(plan.Older))
	for i, t := range plan.Older {
		turns[i] = window.Render(t)
	}
	overhead := window.MessagesTokens([]openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: prompt},
		{Role: openai.ChatMessageRoleUser, Content: summaryPreviousHeader + "\n\n" + summaryTurnsHeader}})
	chunks := window.Chunks(turns, max(1000, budget-overhead-maxSummary))
	summary := window.Truncate(previous, maxSummary)
	for i, chunk := range chunks {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, i)
		}
		if summary, err = a.summarise(ctx, client, model, prompt, summary, chunk, maxSummary); err != nil {
			return workflows.CompactResult{}, err
		}
	}
	summary = window.Truncate(store.CleanText(summary), maxSummary)
	if strings.TrimSpace(summary) == "" {
		summary = fallbackSummary(plan.Older)
	}

	row := store.SummaryMessage(msgID, agentID, in.Seq, summary, ref,
		store.SummaryCoverage{FromSeq: plan.FromSeq, ThroughSeq: plan.Through, Turns: len(plan.Older)})
	saved, err := a.Store.SaveMessage(ctx, row)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		// Another row holds this seq: the workflow numbered wrongly, a retry cannot fix it.
		return workflows.CompactResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("seq %d of agent %s is taken", in.Seq, in.AgentID), "SeqTaken", nil)
	}
	if err != nil {
		return workflows.CompactResult{}, storeFailure("save summary", err)
	}
	a.publish(ctx, events.AgentTopic(in.AgentID), messageEvent(saved))
	res := compactResult(saved)
	res.ModelCalls = len(chunks)
	return res, nil
}

// summarise asks the model (non-streaming) to extend the summary with one chunk of turns.
func (a *Activities) summarise(ctx context.Context, client *openai.Client, model, prompt, previous, chunk string, maxTokens int) (string, error) {
	var input strings.Builder
	if previous != "" {
		input.WriteString(summaryPreviousHeader + "\n" + previous + "\n\n")
	}
	input.WriteString(summaryTurnsHeader + "\n" + chunk)
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: model, MaxCompletionTokens: maxTokens,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: prompt},
			{Role: openai.ChatMessageRoleUser, Content: input.String()},
		},
	})
	if err != nil {
		return "", modelError(err)
	}
	if len(resp.Choices) == 0 || strings.TrimSpace(resp.Choices[0].Message.Content) == "" {
		return previous, nil // nothing new said; the next chunk (or the fallback) goes on from here
	}
	return strings.TrimSpace(resp.Choices[0].Message.Content), nil
}

// fallbackSummary lists the user's requests when the model wrote nothing: the turns still
// leave a trace the model and the user can read.
func fallbackSummary(turns [][]store.Message) string {
	var asks []string
	for _, t := range turns {
		for _, m := range t {
			if m.Role == "user" {
				asks = append(asks, fmt.Sprintf("%q", truncate(m.Content, 80)))
			}
		}
	}
	if len(asks) > 20 {
		asks = asks[len(asks)-20:]
	}
	return fmt.Sprintf("Earlier turns (%d) were left out; the model wrote no summary. The user's latest requests there: %s.",
		len(turns), strings.Join(asks, "; "))
}

func compactResult(m store.Message) workflows.CompactResult {
	c, _ := m.Coverage()
	return workflows.CompactResult{Compacted: true, MessageID: m.ID.String(), FromSeq: c.FromSeq, ThroughSeq: c.ThroughSeq,
		Turns: c.Turns, Chars: len(m.Content)}
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
