package activities

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/store"
)

// titlePrompt asks for a short title of the conversation's first message.
const titlePrompt = "Write a conversation title of at most six words for the user's message. Reply with the title only."

const maxTitleRunes = 60

// GenerateTitle names the conversation after its first message and announces it (title_update).
func (a *Activities) GenerateTitle(ctx context.Context, agentID string) (string, error) {
	defer heartbeatEvery(ctx, modelHeartbeat)() // a lost worker's title is retried within seconds
	id, err := parseAgentID(agentID)
	if err != nil {
		return "", err
	}
	agent, err := a.Store.GetAgent(ctx, id)
	if err != nil {
		return "", fmt.Errorf("load agent: %w", err)
	}
	history, err := a.Store.ListMessages(ctx, id, 0, 1)
	if err != nil || len(history) == 0 {
		return "", fmt.Errorf("load first message: %v", err)
	}
	ref := agent.Model
	if ref == "" {
		ref = a.PrimaryModel
	}
	client, model, err := a.Models.Client(ref)
	if err != nil {
		return "", modelError(err)
	}
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: model, MaxCompletionTokens: 30,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: titlePrompt},
			{Role: openai.ChatMessageRoleUser, Content: truncate(history[0].Content, 2000)},
		},
	})
	if err != nil {
		return "", modelError(err)
	}
	title := ""
	if len(resp.Choices) > 0 {
		title = cleanTitle(resp.Choices[0].Message.Content)
	}
	if title == "" {
		title = cleanTitle(history[0].Content)
	}
	if err := a.Store.SetAgentTitle(ctx, id, title); err != nil {
		return "", err
	}
	a.publish(ctx, events.AgentTopic(agentID), events.Event{ID: "title:" + agentID, Frame: frames.TitleUpdate{Title: title}})
	return title, nil
}

// cleanTitle keeps the first line, drops quotes and trailing punctuation, and cuts at a word
// boundary.
func cleanTitle(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(store.CleanText(s)), "\n")
	s = strings.Trim(s, " \"'`*#")
	s = strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
	r := []rune(s)
	if len(r) <= maxTitleRunes {
		return s
	}
	cut := string(r[:maxTitleRunes])
	if i := strings.LastIndex(cut, " "); i > 20 {
		cut = cut[:i]
	}
	return cut + "…"
}
