package events

import (
	"context"
	"fmt"
	"strings"
)

// DeleteTopic removes everything Redis keeps for a topic: counter, epoch, log and the dedup
// keys of its events (deleting a workspace must not leave 24 h of message content behind).
// Idempotent; a publish after it starts a new epoch.
func (b *Bus) DeleteTopic(ctx context.Context, topic string) error {
	k := b.keys(topic)
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

// globEscape quotes the characters SCAN's MATCH pattern treats specially.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`).Replace(s)
}
