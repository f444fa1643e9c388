package events

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// DeleteTopic removes everything Redis keeps for a topic: counter, epoch, log and the dedup
// keys of its events (deleting a workspace must not leave 24 h of message content behind).
// It leaves a tombstone first: for as long as a log would live (LogTTL, at least a day) the
// topic refuses publishes with ErrTopicDeleted, so a late event of a cancelled activity
// recreates nothing. Idempotent.
func (b *Bus) DeleteTopic(ctx context.Context, topic string) error {
	k := b.keys(topic)
	if err := b.rdb.Set(ctx, k.deleted, "1", max(b.opts.LogTTL, tombstoneTTL)).Err(); err != nil {
		return fmt.Errorf("events: delete topic: %w", err)
	}
	if err := b.rdb.Del(ctx, k.seq, k.epoch, k.log).Err(); err != nil {
		return fmt.Errorf("events: delete topic: %w", err)
	}
	iter := b.rdb.Scan(ctx, 0, globEscape(k.dedupPrefix)+"*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 500 {
			if err := b.rdb.Del(ctx, batch...).Err(); err != nil {
				return fmt.Errorf("events: delete topic: %w", err)
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("events: delete topic: %w", err)
	}
	if len(batch) > 0 {
		if err := b.rdb.Del(ctx, batch...).Err(); err != nil {
			return fmt.Errorf("events: delete topic: %w", err)
		}
	}
	return nil
}

// tombstoneTTL is the shortest a deleted topic refuses publishes: longer than any activity
// that could still publish to it runs.
const tombstoneTTL = 24 * time.Hour

// globEscape quotes the characters SCAN's MATCH pattern treats specially.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`).Replace(s)
}
