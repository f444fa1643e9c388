package events

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Publishes are group-committed: at most `flushers` pipelines are in flight. A caller that
// finds a free slot sends its call (and whatever is queued) itself; otherwise it queues and a
// flusher sends the queue as one pipeline. Alone, a publish goes out at once; when many
// activities publish at the same moment they share round trips instead of queueing for pool
// connections, which keeps throughput and the latency tail close to a bare PUBLISH.
const (
	flushers      = 4   // pipelines in flight at once (each holds one pooled connection)
	maxBatch      = 128 // script calls per pipeline
	queueCapacity = 4096
)

type publishCall struct {
	keys []string
	args []any
	pos  Cursor
	err  error
	done chan struct{}
}

type pipeline struct {
	rdb   *redis.Client
	calls chan *publishCall
	slots chan struct{} // pipelines in flight, inline or by a flusher
	start sync.Once
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newPipeline(rdb *redis.Client) *pipeline {
	return &pipeline{rdb: rdb, calls: make(chan *publishCall, queueCapacity), slots: make(chan struct{}, flushers), stop: make(chan struct{})}
}

// run queues one script call and waits for its result or ctx.
func (p *pipeline) run(ctx context.Context, keys []string, args ...any) (Cursor, error) {
	p.start.Do(func() {
		for i := 0; i < flushers; i++ {
			p.wg.Add(1)
			go p.flushLoop()
		}
	})
	c := &publishCall{keys: keys, args: args, done: make(chan struct{})}
	select {
	case <-p.stop: // checked first: the selects below choose at random among ready cases
		return Cursor{}, redis.ErrClosed
	default:
	}
	// When a pipeline slot is free the call (with whatever is queued) is sent at once, without
	// waiting for a flusher goroutine to pick it up. It is sent on a goroutine of its own so the
	// caller's ctx bounds the wait: a Redis that refuses connections or never answers must not
	// hold a publisher longer than it allows (go-redis retries and its read timeout would).
	select {
	case p.slots <- struct{}{}:
		batch := p.drain([]*publishCall{c})
		go func() {
			p.exec(batch)
			<-p.slots
		}()
		return p.wait(ctx, c)
	case <-p.stop:
		return Cursor{}, redis.ErrClosed
	default:
	}
	select {
	case p.calls <- c:
	case <-ctx.Done():
		return Cursor{}, ctx.Err()
	case <-p.stop:
		return Cursor{}, redis.ErrClosed
	}
	return p.wait(ctx, c)
}

// wait waits for a queued or sent call's result, or ctx.
func (p *pipeline) wait(ctx context.Context, c *publishCall) (Cursor, error) {
	select {
	case <-c.done:
		return c.pos, c.err
	case <-p.stop:
		select {
		case <-c.done:
			return c.pos, c.err
		default:
			return Cursor{}, redis.ErrClosed
		}
	case <-ctx.Done():
		// The event may still be published; its ID makes a retry harmless.
		return Cursor{}, ctx.Err()
	}
}

func (p *pipeline) flushLoop() {
	defer p.wg.Done()
	batch := make([]*publishCall, 0, maxBatch)
	for {
		select {
		case c := <-p.calls:
			batch = append(batch[:0], c)
		case <-p.stop:
			return
		}
		p.slots <- struct{}{}
		p.exec(p.drain(batch))
		<-p.slots
	}
}

// drain adds the calls already queued to batch, up to maxBatch.
func (p *pipeline) drain(batch []*publishCall) []*publishCall {
	for len(batch) < maxBatch {
		select {
		case c := <-p.calls:
			batch = append(batch, c)
		default:
			return batch
		}
	}
	return batch
}

func (p *pipeline) exec(batch []*publishCall) {
	ctx := context.Background() // the client's read/write timeouts bound the round trip
	cmds := make([]*redis.Cmd, len(batch))
	_, _ = p.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, c := range batch {
			cmds[i] = publishScript.EvalSha(ctx, pipe, c.keys, c.args...)
		}
		return nil
	})
	// After a Redis restart or SCRIPT FLUSH the script is unknown: send it in full once.
	var missing []int
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		_, _ = p.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, i := range missing {
				cmds[i] = publishScript.Eval(ctx, pipe, batch[i].keys, batch[i].args...)
			}
			return nil
		})
	}
	for i, c := range batch {
		var res []any
		if res, c.err = cmds[i].Slice(); c.err == nil {
			c.pos, c.err = scriptCursor(res)
		}
		close(c.done)
	}
}

// close stops the flushers; queued calls not yet sent fail with redis.ErrClosed.
func (p *pipeline) close() {
	select {
	case <-p.stop:
		return
	default:
	}
	close(p.stop)
	p.wg.Wait()
	for {
		select {
		case c := <-p.calls:
			c.err = redis.ErrClosed
			close(c.done)
		default:
			return
		}
	}
}
